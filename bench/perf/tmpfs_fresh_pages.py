import os, time, mmap
N=2<<30; chunk=b'\x5a'*(1<<20)
for r in range(4):
    p='/dev/shm/pxfer-fresh-pages-test.bin'
    fd=os.open(p, os.O_RDWR|os.O_CREAT|os.O_TRUNC, 0o600)
    t0=time.perf_counter()
    for off in range(0,N,1<<20): os.pwrite(fd,chunk,off)
    t1=time.perf_counter()
    os.close(fd); os.unlink(p)
    print(f"round {r+1}: 2 GiB written to a new tmpfs file in {t1-t0:.2f} s = {N/(t1-t0)/1e6:.0f} MB/s; load {open('/proc/loadavg').read().split()[0]}", flush=True)
