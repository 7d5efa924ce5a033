#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int r; MPI_Comm_rank(MPI_COMM_WORLD,&r);
  int touch = argc>1 ? atoi(argv[1]) : 1;
  size_t sizes[]={4096,8192,16384,32768,65536,131072};
  char*s=malloc(1<<18),*d=malloc(1<<18);
  memset(s,1,1<<18); memset(d,0,1<<18);
  for(int k=0;k<6;k++){ size_t n=sizes[k]; int it=2000; double t[2000];
    for(int i=-100;i<it;i++){
      if(touch) memset(s,i&0x7f,n);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0=MPI_Wtime();
      if(r==0){MPI_Send(s,n,MPI_CHAR,1,0,MPI_COMM_WORLD);MPI_Recv(d,n,MPI_CHAR,1,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);}
      else {MPI_Recv(d,n,MPI_CHAR,0,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);if(touch) memset(s,i&0x7f,n); MPI_Send(s,n,MPI_CHAR,0,0,MPI_COMM_WORLD);}
      double t1=MPI_Wtime(); if(i>=0) t[i]=(t1-t0)*1e6/2;
      if(touch && d[n-1]!=(char)(i&0x7f)){fprintf(stderr,"bad\n");MPI_Abort(MPI_COMM_WORLD,1);}
    }
    qsort(t,it,sizeof(double),cmp);
    if(r==0) printf("%zu:%.2f ",n,t[it/2]);
  }
  if(r==0)printf("\n");
  MPI_Finalize(); return 0;}
