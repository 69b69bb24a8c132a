// bench/perf/tmpfile_link.c: the cost of storing one small file, a named temporary file renamed into
// place against O_TMPFILE + linkat (docs/performance.md section 21). gcc -O2 tmpfile_link.c -o tl;
// ./tl 0|1 DIR: 10,000 files of 64 KiB into DIR, prints the CPU seconds (0 = create + rename, 1 = O_TMPFILE).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/resource.h>
static double cpu(){struct rusage r;getrusage(RUSAGE_SELF,&r);return r.ru_utime.tv_sec+r.ru_stime.tv_sec+1e-6*(r.ru_utime.tv_usec+r.ru_stime.tv_usec);}
int main(int argc,char**argv){int mode=atoi(argv[1]);const char*dir=argv[2];int n=10000;static char buf[65536];memset(buf,7,sizeof buf);
int d=open(dir,O_DIRECTORY|O_RDONLY);double c0=cpu();char name[64],tmp[64],p[64];
for(int i=0;i<n;i++){snprintf(name,64,"f%05d",i);
 if(mode==0){snprintf(tmp,64,".f%05d.part",i);int fd=openat(d,tmp,O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC,0644);pwrite(fd,buf,sizeof buf,0);renameat2(d,tmp,d,name,RENAME_NOREPLACE);close(fd);}
 else {int fd=openat(d,".",O_TMPFILE|O_WRONLY|O_CLOEXEC,0644);pwrite(fd,buf,sizeof buf,0);snprintf(p,64,"/proc/self/fd/%d",fd);if(linkat(AT_FDCWD,p,d,name,AT_SYMLINK_FOLLOW))perror("linkat");close(fd);}
}
printf("mode %d cpu %.3f\n",mode,cpu()-c0);}
