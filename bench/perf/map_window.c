// bench/perf/map_window.c: what mapping the sender's blocks costs, two threads over one file in
// /dev/shm (docs/performance.md section 21). gcc -O2 -pthread map_window.c -o mw; ./mw MODE FILE WINDOW_MIB:
// 0 = mmap/munmap per 2 MiB block, 1 = one mapping per WINDOW_MIB, 2 = pread into a kept buffer,
// 3 = per block with MAP_POPULATE. Touches one byte per cache line; prints the CPU seconds.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdint.h>
static int fd, mode; static size_t fsz, win;
static double cpu(){struct rusage r;getrusage(RUSAGE_SELF,&r);return r.ru_utime.tv_sec+r.ru_stime.tv_sec+1e-6*(r.ru_utime.tv_usec+r.ru_stime.tv_usec);}
static uint64_t sum(const uint8_t*p,size_t n){uint64_t s=0;for(size_t i=0;i<n;i+=64)s+=p[i];return s;}
static void* run(void*a){long t=(long)a;const size_t B=2<<20;uint64_t s=0;uint8_t*buf=aligned_alloc(4096,B);
 if(mode==1){ // window maps
   for(size_t w=t*win; w<fsz; w+=2*win){size_t n=w+win>fsz?fsz-w:win;uint8_t*p=mmap(0,n,PROT_READ,MAP_SHARED,fd,w);for(size_t o=0;o<n;o+=B)s+=sum(p+o,B);munmap(p,n);} }
 else for(size_t o=t*B;o<fsz;o+=2*B){
   if(mode==0){uint8_t*p=mmap(0,B,PROT_READ,MAP_SHARED,fd,o);s+=sum(p,B);munmap(p,B);}
   else if(mode==2){pread(fd,buf,B,o);s+=sum(buf,B);}
   else if(mode==3){uint8_t*p=mmap(0,B,PROT_READ,MAP_SHARED|MAP_POPULATE,fd,o);s+=sum(p,B);munmap(p,B);}
 }
 return (void*)s;}
int main(int c,char**v){mode=atoi(v[1]);win=(size_t)atoi(v[3])<<20;fd=open(v[2],O_RDONLY);fsz=lseek(fd,0,SEEK_END);
 double c0=cpu();pthread_t th[2];for(long i=0;i<2;i++)pthread_create(&th[i],0,run,(void*)i);for(int i=0;i<2;i++)pthread_join(th[i],0);
 printf("mode %d win %s cpu %.3f\n",mode,v[3],cpu()-c0);}
