#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(){
  for(size_t b=4096;b<=(1<<23);b*=2){
    char*f=aligned_alloc(4096,b),*t=aligned_alloc(4096,b);memset(f,1,b);memset(t,2,b);
    double bc=1e18,bm=1e18;
    for(int i=0;i<7;i++){double a=now();memcpy(t,f,b);asm volatile(""::"r"(t):"memory");double d=now()-a;if(d<bc)bc=d;}
    for(int i=0;i<7;i++){struct iovec l={t,b},r={f,b};double a=now();process_vm_readv(getpid(),&l,1,&r,1,0);double d=now()-a;if(d<bm)bm=d;}
    printf("%7zu copy %6.1f GB/s cma %6.1f GB/s (%.0f ns)\n",b,b/bc,b/bm,bm);
    free(f);free(t);}
}
