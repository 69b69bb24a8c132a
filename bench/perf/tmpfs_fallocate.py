import os, time
N=2<<30; chunk=b'\x5a'*(1<<20)
for r in range(2):
  for mode in ("fallocate","ftruncate"):
    p='/dev/shm/pxfer-fallocate-test.bin'
    fd=os.open(p, os.O_RDWR|os.O_CREAT|os.O_TRUNC, 0o600)
    t0=time.perf_counter()
    if mode=="fallocate": os.posix_fallocate(fd,0,N)
    else: os.ftruncate(fd,N)
    t1=time.perf_counter()
    for off in range(0,N,1<<20): os.pwrite(fd,chunk,off)
    t2=time.perf_counter()
    os.close(fd); os.unlink(p)
    print(f"{mode:9} {t1-t0:.2f} s + writes {t2-t1:.2f} s = {t2-t0:.2f} s (load {open('/proc/loadavg').read().split()[0]})", flush=True)
