"""A traced copy of stats.cu: block 0 of k_clip_grid records each round's
kind (sel.mode: 0 histogram, 1 gathering, 2 bracket), digit pass, phase, the
clip it belongs to, the candidates gathered, and the times of its scan, of
the wait at the grid barrier and of the pick after it (globaltimer), and
prints them when the kernel ends.  An experiment, not part of the build:

    python3 src/kernels/dev/clip_trace.py /tmp/stats_traced.cu
    cp src/kernels/stats.cu /tmp/stats.cu && cp /tmp/stats_traced.cu src/kernels/stats.cu
    python3 setup.py build_ext --inplace      # then call gpuarr.stats.sigma_clip
    cp /tmp/stats.cu src/kernels/stats.cu      # and rebuild

Run from the repository root; it fails (assert) when an anchor it edits at
has changed in stats.cu."""
import sys
src = open("src/kernels/stats.cu").read()
def sub(old, new):
    global src
    assert src.count(old) == 1, old
    src = src.replace(old, new)
T = "({ unsigned long long _t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(_t)); _t; })"
B0 = "if (blockIdx.x == 0 && threadIdx.x == 0 && ntr < 16)"
CLOSE = (B0 + " { if (opn) { tr[ntr][3] = " + T + "; for (int u = 0; u < 5; ++u) sb[ntr][u] = g_sub[u];"
         " ntr++; opn = 0; } }\n")
sub("    __shared__ bool stop;\n    cg::grid_group grid = cg::this_grid();",
    "    __shared__ bool stop;\n    __shared__ unsigned long long tr[16][4], sb[16][5]; __shared__ int trm[16][5]; __shared__ int ntr, opn;\n"
    "    if (threadIdx.x == 0) ntr = opn = 0;\n    const unsigned long long tk0 = " + T + ";\n"
    "    cg::grid_group grid = cg::this_grid();")
sub("                    const unsigned int q = round++;\n",
    "                    const unsigned int q = round++;\n" + CLOSE +
    "                    " + B0 + " { opn = 1; tr[ntr][0] = " + T + "; trm[ntr][0] = sel.mode; trm[ntr][1] = sel.pass; trm[ntr][2] = phase; trm[ntr][3] = st.iterations; trm[ntr][4] = -1; }\n")
sub("                    grid.sync();\n",
    "                    " + B0 + " tr[ntr][1] = " + T + ";\n"
    "                    grid.sync();\n"
    "                    " + B0 + " tr[ntr][2] = " + T + ";\n")
sub("                        const int64_t n = (int64_t)__ldcg(c.ncand);\n",
    "                        const int64_t n = (int64_t)__ldcg(c.ncand);\n"
    "                        " + B0 + " trm[ntr][4] = (int)n;\n")
sub("                if (stop)\n                    break;\n                if (threadIdx.x == 0)\n                    clip_after_phase<T>(st, a, phase, final);",
    "                " + CLOSE +
    "                if (stop)\n                    break;\n                if (threadIdx.x == 0)\n                    clip_after_phase<T>(st, a, phase, final);")
sub("    if (blockIdx.x == 0 && threadIdx.x == 0)\n        *a.state = st;\n}",
    "    if (blockIdx.x == 0 && threadIdx.x == 0) {\n        *a.state = st;\n"
    "        const unsigned long long tk1 = " + T + ";\n"
    "        printf(\"CLIPTRACE grid=%d rounds=%d iterations=%d total=%.1fus\\n\", (int)gridDim.x, ntr, (int)st.iterations, (tk1 - tk0) / 1000.0);\n"
    "        for (int i = 0; i < ntr; ++i) printf(\"CLIPTRACE r%d it%d mode%d pass%d ph%d ncand=%d scan=%.2f wait=%.2f pick=%.2f\\n\", i, trm[i][3], trm[i][0], trm[i][1], trm[i][2], trm[i][4], (tr[i][1]-tr[i][0])/1000.0, (tr[i][2]-tr[i][1])/1000.0, (tr[i][3]-tr[i][2])/1000.0); for (int i = 0; i < ntr; ++i) { double f = 1000.0; printf(\"CLIPSUB r%d start=%.2f moments=%.2f load=%.2f select=%.2f bracket=%.2f rest=%.2f\\n\", i, (sb[i][0]-tr[i][0])/f, sb[i][1] ? (sb[i][1]-tr[i][2])/f : 0.0, sb[i][2] ? (sb[i][2]-sb[i][1])/f : 0.0, sb[i][3] ? (sb[i][3]-sb[i][2])/f : 0.0, sb[i][4] ? (sb[i][4]-sb[i][3])/f : 0.0, sb[i][4] ? (tr[i][3]-sb[i][4])/f : (tr[i][3]-sb[i][1])/f); }\n"
    "    }\n}")
# Sub-steps of a round (block 0, thread 0): scan start, after the moments'
# sums, the candidates loaded and binned, the ranks' bins picked, the
# bracket made (0 where a round has no such step).
G = "if (blockIdx.x == 0 && threadIdx.x == 0) g_sub"
sub("namespace {\n\nconstexpr int CL_THREADS", "__shared__ unsigned long long g_sub[5];\n\nnamespace {\n\nconstexpr int CL_THREADS")
sub("                    clip_scan<T>((const T *)a.data",
    "                    " + G + "[0] = " + T + ";\n                    clip_scan<T>((const T *)a.data")
sub("                    if (c.collect) {\n                        const int64_t n = (int64_t)__ldcg(c.ncand);",
    "                    " + G + "[1] = " + T + ";\n                    if (c.collect) {\n                        const int64_t n = (int64_t)__ldcg(c.ncand);")
sub("    ga_block_select_bins<THREADS>(hist, GA_RADIX_BINS, ranks, bins, under, in);\n",
    "    " + G + "[2] = " + T + ";\n    ga_block_select_bins<THREADS>(hist, GA_RADIX_BINS, ranks, bins, under, in);\n    " + G + "[3] = " + T + ";\n")
sub("    // b1 is b0 or the next non-empty bin",
    "    " + G + "[4] = " + T + ";\n    // b1 is b0 or the next non-empty bin")
sub("                    " + B0 + " { opn = 1; tr[ntr][0] = ",
    "                    if (blockIdx.x == 0 && threadIdx.x == 0) for (int u = 0; u < 5; ++u) g_sub[u] = 0;\n"
    "                    " + B0 + " { opn = 1; tr[ntr][0] = ")
open(sys.argv[1], "w").write(src)
