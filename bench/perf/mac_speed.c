// bench/perf/mac_speed.c: the per-block MAC candidates of issue 11.2 through OpenSSL, 4 GiB in 256 KiB
// pieces, 3 rounds: GMAC (AES-128-GCM over the bytes as AAD) against Poly1305 (docs/performance.md
// section 21). gcc -O2 mac_speed.c -o ms -lcrypto && ./ms
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){static unsigned char buf[262144];memset(buf,1,sizeof buf);unsigned char key[32]={1},iv[12]={2},tag[16];size_t total=(size_t)4<<30;
 for(int round=0;round<3;round++){
 double t0=now();
 EVP_CIPHER_CTX*c=EVP_CIPHER_CTX_new();int outl;
 for(size_t d=0;d<total;d+=sizeof buf){EVP_EncryptInit_ex(c,EVP_aes_128_gcm(),NULL,key,iv);EVP_EncryptUpdate(c,NULL,&outl,buf,sizeof buf);EVP_EncryptFinal_ex(c,NULL,&outl);EVP_CIPHER_CTX_ctrl(c,EVP_CTRL_GCM_GET_TAG,16,tag);}
 double t1=now();
 EVP_MAC*m=EVP_MAC_fetch(NULL,"POLY1305",NULL);EVP_MAC_CTX*mc=EVP_MAC_CTX_new(m);
 for(size_t d=0;d<total;d+=sizeof buf){EVP_MAC_init(mc,key,32,NULL);EVP_MAC_update(mc,buf,sizeof buf);size_t o;EVP_MAC_final(mc,tag,&o,16);}
 double t2=now();
 printf("GMAC (aes-128-gcm, AAD only) %.2f GB/s   Poly1305 %.2f GB/s\n",total/(t1-t0)/1e9,total/(t2-t1)/1e9);}
}
