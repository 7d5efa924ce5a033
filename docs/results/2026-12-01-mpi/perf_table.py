import re, statistics, glob, os
L='/tmp/ext/perf'
sizes=[1,64,1024,16384,65536]
benches=[('latency','osu_latency, 2 ranks, avg latency us',1),('bw','osu_bw, 2 ranks, MB/s',1),
         ('allreduce','osu_allreduce, 4 ranks, avg latency us',1),('alltoall','osu_alltoall, 4 ranks, avg latency us',1),
         ('iallreduce','osu_iallreduce, 4 ranks, Pure Comm. us',3),('iallreduce_ov','osu_iallreduce, 4 ranks, Overall us',1)]
impls=['xmsg','ompi','mpich']
def parse(f,col):
    d={}
    for line in open(f):
        if line.startswith('#'): continue
        p=line.split()
        if len(p)>col and p[0].isdigit():
            try: d[int(p[0])]=float(p[col])
            except: pass
    return d
out=[]
for b,title,col in benches:
    fb=b.replace('_ov','')
    out.append(f'\n**{title}** (median of 3; individual runs in brackets)\n')
    out.append('| size (B) | ' + ' | '.join(impls) + ' |')
    out.append('|---|' + '---|'*len(impls))
    for s in sizes:
        row=[str(s)]
        for i in impls:
            vals=[]
            for r in (1,2,3):
                f=f'{L}/{fb}_{i}_r{r}.log'
                if os.path.exists(f):
                    v=parse(f,col).get(s)
                    if v is not None: vals.append(v)
            row.append(f'{statistics.median(vals):.2f} [{", ".join(f"{v:.2f}" for v in vals)}]' if vals else 'n/a')
        out.append('| ' + ' | '.join(row) + ' |')
print('\n'.join(out))
