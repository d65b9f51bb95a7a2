// convolve_emu.cu -- the correlation and order-statistic kernels run on the
// CPU, phase by phase and block by block, against naive references.
//
// The kernels in convolve.cu and filters.cu keep each phase's per-thread
// work in __host__ __device__ functions; this harness calls them for every
// thread of a block between the points where the kernel has __syncthreads(),
// in the kernel's order, over random shapes, offsets, modes, chunk sizes and
// element types.  Shared memory starts as NaN (or a sentinel), so a read of
// a value no phase wrote shows up in the result.  No GPU is needed:
//
//   nvcc -std=c++17 --expt-relaxed-constexpr -Isrc/kernels \
//        -o /tmp/convolve_emu src/kernels/dev/convolve_emu.cu && /tmp/convolve_emu
//
// It prints one line per configuration family and exits non-zero on the
// first mismatch, with the configuration.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../convolve.cu"
#include "../filters.cu"

static std::mt19937_64 rng(12345);

static int64_t rnd(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

template <class T> T rnd_value();
template <> float rnd_value<float>() { return (float)rnd(-50, 50) / 8.0f; }
template <> double rnd_value<double>() { return (double)rnd(-50, 50) / 8.0; }
template <> int64_t rnd_value<int64_t>() { return rnd(-50, 50); }
template <> ga_c64 rnd_value<ga_c64>() { return ga_c64{rnd_value<float>(), rnd_value<float>()}; }
template <> ga_c128 rnd_value<ga_c128>() { return ga_c128{rnd_value<double>(), rnd_value<double>()}; }

template <class T> T poison();
template <> float poison<float>() { return NAN; }
template <> double poison<double>() { return NAN; }
template <> int64_t poison<int64_t>() { return (int64_t)1 << 60; }
template <> ga_c64 poison<ga_c64>() { return ga_c64{NAN, NAN}; }
template <> ga_c128 poison<ga_c128>() { return ga_c128{NAN, NAN}; }

static double mag(float v) { return std::fabs(v); }
static double mag(double v) { return std::fabs(v); }
static double mag(int64_t v) { return std::fabs((double)v); }
static double mag(ga_c64 v) { return std::fabs(v.re) + std::fabs(v.im); }
static double mag(ga_c128 v) { return std::fabs(v.re) + std::fabs(v.im); }
static float sub(float a, float b) { return a - b; }
static double sub(double a, double b) { return a - b; }
static int64_t sub(int64_t a, int64_t b) { return a - b; }
static ga_c64 sub(ga_c64 a, ga_c64 b) { return ga_c64{a.re - b.re, a.im - b.im}; }
static ga_c128 sub(ga_c128 a, ga_c128 b) { return ga_c128{a.re - b.re, a.im - b.im}; }

template <class T> static bool close(T a, T b)
{
    double d = mag(sub(a, b));
    return d == d && d <= 1e-4 * (1.0 + mag(b));
}

template <class T> static ga_kscalar as_scalar(T v)
{
    ga_kscalar s;
    memset(&s, 0, sizeof(s));
    memcpy(s.v.bytes, &v, sizeof(T));
    return s;
}

static const char *mode_name[] = {"constant", "reflect", "mirror", "nearest", "wrap"};

// ------------------------------------------------------------ references ---

// out[p] = sum_q w'[q] X[p + q + off] over N-d shapes (C order), w' the taps
// (reversed when flip, conjugated when conj).
template <class T>
static std::vector<T> reference(const std::vector<int64_t> &nin, const std::vector<int64_t> &nout,
                                const std::vector<int64_t> &k, const std::vector<int64_t> &off,
                                const std::vector<T> &x, const std::vector<T> &w, int mode, T cval,
                                bool flip, bool conj)
{
    size_t nd = nin.size();
    int64_t total = 1, ktot = 1;
    for (size_t d = 0; d < nd; ++d) { total *= nout[d]; ktot *= k[d]; }
    std::vector<T> out(total);
    std::vector<int64_t> p(nd), q(nd);
    for (int64_t i = 0; i < total; ++i) {
        int64_t r = i;
        for (size_t d = nd; d-- > 0;) { p[d] = r % nout[d]; r /= nout[d]; }
        T acc = cv_zero<T>();
        for (int64_t t = 0; t < ktot; ++t) {
            int64_t s = t;
            for (size_t d = nd; d-- > 0;) { q[d] = s % k[d]; s /= k[d]; }
            int64_t idx = 0;
            bool constant = false;
            for (size_t d = 0; d < nd; ++d) {
                int64_t g = ga_ext_index<int64_t>(p[d] + q[d] + off[d], nin[d], mode);
                if (g < 0) { constant = true; break; }
                idx = idx * nin[d] + g;
            }
            T tap = w[flip ? ktot - 1 - t : t];
            if (conj) tap = cv_conj(tap);
            cv_mac(acc, tap, constant ? cval : x[idx]);
        }
        out[i] = acc;
    }
    return out;
}

// ------------------------------------------------------------ line kernel --

template <class T>
static void emulate_line(const ga_conv_line &p, const T *x, const T *w, T *out)
{
    // The staged kernel, or the warp one (the same phases with bx 32, by 1:
    // one emulated block a warp).
    const int64_t slot_len = ga_conv_line_slot(p.bx, p.kchunk);
    if (slot_len != line_phys((int64_t)p.bx * LC + p.kchunk - 2) + 1) {
        printf("line slot size disagrees with kernels.h\n");
        exit(1);
    }
    std::vector<T> smem(p.by * slot_len);
    std::vector<T> acc((size_t)p.bx * p.by * LC);
    for (int64_t b = 0; b < ga_conv_line_blocks(&p); ++b) {
        int64_t tile, group;
        line_block(p, b, &tile, &group);
        const int64_t i0 = tile * p.bx * LC;
        for (auto &v : smem) v = poison<T>();
        for (auto &v : acc) v = cv_zero<T>();
        for (int64_t k0 = 0; k0 < p.ax.k; k0 += p.kchunk) {
            int kc = (int)std::min((int64_t)p.kchunk, p.ax.k - k0);
            for (int ty = 0; ty < p.by; ++ty)
                for (int tx = 0; tx < p.bx; ++tx) {
                    if (p.warp && sizeof(T) == 8)     // cp.async staging (a plain copy here)
                        line_fill<true>(p, x, smem.data() + ty * slot_len, group * p.by + ty,
                                        i0 + p.ax.off + k0, p.bx * LC + kc - 1, tx);
                    else
                        line_fill(p, x, smem.data() + ty * slot_len, group * p.by + ty,
                                  i0 + p.ax.off + k0, p.bx * LC + kc - 1, tx);
                }
            for (int ty = 0; ty < p.by; ++ty)
                for (int tx = 0; tx < p.bx; ++tx)
                    line_accumulate(p, w, smem.data() + ty * slot_len, tx, k0, kc,
                                    *reinterpret_cast<T(*)[LC]>(&acc[(ty * p.bx + tx) * LC]));
        }
        for (int ty = 0; ty < p.by; ++ty)
            for (int tx = 0; tx < p.bx; ++tx)
                line_stage(p, smem.data() + ty * slot_len, tx,
                           *reinterpret_cast<T(*)[LC]>(&acc[(ty * p.bx + tx) * LC]));
        for (int ty = 0; ty < p.by; ++ty)
            for (int tx = 0; tx < p.bx; ++tx)
                line_store(p, out, smem.data() + ty * slot_len, group * p.by + ty, i0, tx);
    }
}

template <class T>
static int check_line(int trials, bool complex_flags)
{
    for (int trial = 0; trial < trials; ++trial) {
        ga_conv_line p;
        memset(&p, 0, sizeof(p));
        p.rows = rnd(1, 5);
        p.ax.n_in = rnd(1, 300);
        p.ax.k = rnd(1, trial % 3 == 0 ? 400 : 40);
        p.ax.n_out = rnd(1, 320);
        p.ax.off = rnd(-p.ax.k - 40, 40);
        p.mode = (int)rnd(0, 4);
        p.flags = (int)rnd(0, 1) * GA_CONV_FLIP;
        if (complex_flags)
            p.flags |= (int)rnd(0, 1) * GA_CONV_CONJ_TAPS | (int)rnd(0, 1) * GA_CONV_CONJ_OUT |
                       (int)rnd(0, 1) * GA_CONV_REVERSE_OUT;
        else
            p.flags |= (int)rnd(0, 1) * GA_CONV_REVERSE_OUT;
        p.bx = 32 << rnd(0, 3);
        p.by = (int)rnd(1, 256 / p.bx);
        p.kchunk = (int)rnd(1, std::min<int64_t>(p.ax.k, 70));
        if (trial % 2) {    // the warp variant: the staged phases per warp
            p.warp = (int)rnd(1, 4);
            p.bx = 32;
            p.by = 1;
            p.kchunk = (int)p.ax.k;
        }
        T cval = rnd_value<T>();
        p.cval = as_scalar(cval);
        // One element more than needed, so a misaligned start (the 16-byte
        // staging paths split at 16-byte boundaries) is tried too.
        const int shift = (int)rnd(0, 1);
        std::vector<T> xbuf(p.rows * p.ax.n_in + 1), w(p.ax.k),
            obuf(p.rows * p.ax.n_out + 1, poison<T>());
        std::vector<T> &x = xbuf;
        T *xs = xbuf.data() + shift, *outs = obuf.data() + shift;
        for (auto &v : x) v = rnd_value<T>();
        for (auto &v : w) v = rnd_value<T>();
        emulate_line(p, xs, w.data(), outs);
        std::vector<T> xv(xs, xs + p.rows * p.ax.n_in), out(outs, outs + p.rows * p.ax.n_out);
        std::vector<T> ref = reference<T>({p.rows, p.ax.n_in}, {p.rows, p.ax.n_out}, {1, p.ax.k},
                                          {0, p.ax.off}, xv, w, p.mode, cval,
                                          p.flags & GA_CONV_FLIP, p.flags & GA_CONV_CONJ_TAPS);
        for (int64_t r = 0; r < p.rows; ++r)
            for (int64_t i = 0; i < p.ax.n_out; ++i) {
                T want = ref[r * p.ax.n_out + i];
                if (p.flags & GA_CONV_CONJ_OUT) want = cv_conj(want);
                int64_t at = (p.flags & GA_CONV_REVERSE_OUT) ? p.ax.n_out - 1 - i : i;
                if (!close(out[r * p.ax.n_out + at], want)) {
                    printf("line mismatch (type size %zu): rows %lld n_in %lld n_out %lld k %lld "
                           "off %lld mode %s flags %d bx %d by %d kchunk %d warp %d "
                           "shift %d at row %lld i %lld\n",
                           sizeof(T), (long long)p.rows, (long long)p.ax.n_in,
                           (long long)p.ax.n_out, (long long)p.ax.k, (long long)p.ax.off,
                           mode_name[p.mode], p.flags, p.bx, p.by, p.kchunk, p.warp,
                           shift, (long long)r, (long long)i);
                    return 1;
                }
            }
    }
    printf("line kernel, element size %zu: %d random configurations match\n", sizeof(T), trials);
    return 0;
}

// ------------------------------------------------------------ tile kernel --

template <class T>
static void emulate_tile(const ga_conv_tile &p, const T *x, const T *w, T *out)
{
    const TileGeom g = tile_geom(p);
    std::vector<T> smem(ga_conv_tile_smem(&p) + 16 / sizeof(T));
    // 16-byte aligned start, as the kernel's dynamic shared memory.
    T *base = smem.data();
    while ((uintptr_t)base % 16) ++base;
    T *tile = base, *taps = base + g.taps_at;
    std::vector<T> acc(TBX * TBY * TR);
    const int64_t plane_taps = p.h.k * p.w.k;
    for (int64_t b = 0; b < ga_conv_tile_blocks(&p); ++b) {
        int64_t c0, r0, po;
        tile_block(p, b, &c0, &r0, &po);
        for (auto &v : smem) v = poison<T>();
        for (auto &v : acc) v = cv_zero<T>();
        for (int64_t o = 0; o < g.ntaps / plane_taps; ++o) {
            const int64_t plane = tile_plane(p, po, o);
            const T *pl = plane < 0 ? nullptr : x + plane;
            for (int64_t i0 = 0; i0 < p.h.k; i0 += p.kh_chunk) {
                int kh = (int)std::min((int64_t)p.kh_chunk, p.h.k - i0);
                for (int64_t j0 = 0; j0 < p.w.k; j0 += p.kw_chunk) {
                    int kw = (int)std::min((int64_t)p.kw_chunk, p.w.k - j0);
                    for (int ty = 0; ty < TBY; ++ty)
                        for (int tx = 0; tx < TBX; ++tx) {
                            tile_fill(p, g, pl, tile, (int)(r0 + p.h.off + i0),
                                      (int)(c0 + p.w.off + j0), TH + kh - 1, TBX + kw - 1, tx, ty);
                            tile_fill_taps(p, g, w, taps, o * plane_taps + i0 * p.w.k + j0, kh, kw,
                                           ty * TBX + tx);
                        }
                    for (int ty = 0; ty < TBY; ++ty)
                        for (int tx = 0; tx < TBX; ++tx)
                            tile_accumulate(g, tile, taps, kh, kw, tx, ty,
                                            *reinterpret_cast<T(*)[TR]>(&acc[(ty * TBX + tx) * TR]));
                }
            }
        }
        for (int ty = 0; ty < TBY; ++ty)
            for (int tx = 0; tx < TBX; ++tx)
                tile_store(p, out, po, r0, c0, tx, ty,
                           *reinterpret_cast<T(*)[TR]>(&acc[(ty * TBX + tx) * TR]));
    }
}

static ga_conv_axis random_axis(int64_t maxn, int64_t maxk)
{
    ga_conv_axis a;
    a.n_in = rnd(1, maxn);
    a.k = rnd(1, maxk);
    a.n_out = rnd(1, maxn + maxk);
    a.off = rnd(-a.k - 5, 5);
    return a;
}

template <class T>
static int check_tile(int trials)
{
    for (int trial = 0; trial < trials; ++trial) {
        ga_conv_tile p;
        memset(&p, 0, sizeof(p));
        p.nouter = (int)rnd(0, trial % 4 == 0 ? 2 : 0);
        for (int d = 0; d < p.nouter; ++d)
            p.outer[d] = random_axis(4, 3);
        p.h = random_axis(trial % 5 == 0 ? 90 : 40, trial % 7 == 0 ? 60 : 17);
        p.w = random_axis(trial % 5 == 0 ? 150 : 70, trial % 7 == 0 ? 60 : 17);
        p.mode = (int)rnd(0, 4);
        p.flags = (int)rnd(0, 1) * GA_CONV_FLIP;
        p.kh_chunk = (int)rnd(1, std::min<int64_t>(p.h.k, 24));
        p.kw_chunk = (int)rnd(1, std::min<int64_t>(p.w.k, 24));
        if (trial % 2) {    // as the host plans them: balanced chunks
            p.kh_chunk = (int)((p.h.k + (p.h.k + 23) / 24 - 1) / ((p.h.k + 23) / 24));
            p.kw_chunk = (int)((p.w.k + (p.w.k + 23) / 24 - 1) / ((p.w.k + 23) / 24));
        }
        T cval = rnd_value<T>();
        p.cval = as_scalar(cval);
        std::vector<int64_t> nin, nout, k, off;
        for (int d = 0; d < p.nouter; ++d) {
            nin.push_back(p.outer[d].n_in); nout.push_back(p.outer[d].n_out);
            k.push_back(p.outer[d].k); off.push_back(p.outer[d].off);
        }
        for (const ga_conv_axis *a : {&p.h, &p.w}) {
            nin.push_back(a->n_in); nout.push_back(a->n_out); k.push_back(a->k); off.push_back(a->off);
        }
        int64_t nx = 1, nw = 1, no = 1;
        for (size_t d = 0; d < nin.size(); ++d) { nx *= nin[d]; nw *= k[d]; no *= nout[d]; }
        std::vector<T> x(nx), w(nw), out(no, poison<T>());
        for (auto &v : x) v = rnd_value<T>();
        for (auto &v : w) v = rnd_value<T>();
        emulate_tile(p, x.data(), w.data(), out.data());
        std::vector<T> ref = reference<T>(nin, nout, k, off, x, w, p.mode, cval,
                                          p.flags & GA_CONV_FLIP, false);
        for (int64_t i = 0; i < no; ++i)
            if (!close(out[i], ref[i])) {
                printf("tile mismatch (type size %zu) at %lld: nouter %d h (%lld %lld %lld %lld) "
                       "w (%lld %lld %lld %lld) mode %s flags %d chunks %d x %d\n", sizeof(T),
                       (long long)i, p.nouter, (long long)p.h.n_in, (long long)p.h.n_out,
                       (long long)p.h.k, (long long)p.h.off, (long long)p.w.n_in,
                       (long long)p.w.n_out, (long long)p.w.k, (long long)p.w.off,
                       mode_name[p.mode], p.flags, p.kh_chunk, p.kw_chunk);
                return 1;
            }
    }
    printf("tile kernel, element size %zu: %d random configurations match\n", sizeof(T), trials);
    return 0;
}

// ------------------------------------------------------------ separable ---

// The factor block with nt threads (its reductions done here).
template <class T>
static void emulate_factor(const ga_conv_tile &p, const T *w, T *fac, int nt)
{
    double best = -1.0;
    int64_t pivot = 0;
    bool finite = true;
    for (int tid = 0; tid < nt; ++tid) {
        double b;
        int64_t at;
        bool f;
        sep_pivot_local(p, w, tid, nt, &b, &at, &f);
        finite = finite && f;
        if (b > best || (b == best && at < pivot)) { best = b; pivot = at; }
    }
    bool ok = finite && best > 0.0;
    for (int tid = 0; tid < nt; ++tid)
        ok = ok && sep_check_local(p, w, pivot, tid, nt);
    for (int tid = 0; tid < nt; ++tid)
        sep_write(p, w, pivot, ok, fac, tid, nt);
}

template <class T, int SR, int SBY>
static void emulate_sep(const ga_conv_tile &p, const T *x, const T *fac, T *out)
{
    if (fac[0] == T(0)) return;
    const SepGeom g = sep_geom<SR, SBY>(p);
    std::vector<T> smem(sep_smem<SR, SBY>(p) + 16 / sizeof(T));
    T *base = smem.data();
    while ((uintptr_t)base % 16) ++base;
    for (int64_t b = 0; b < sep_blocks<SR, SBY>(p); ++b) {
        int64_t c0, r0;
        sep_block<SR, SBY>(p, b, &c0, &r0);
        for (auto &v : smem) v = poison<T>();
        for (int ty = 0; ty < SBY; ++ty)
            for (int tx = 0; tx < SBX; ++tx)
                sep_fill<SR, SBY>(p, g, x, fac, base, r0, c0, tx, ty);
        for (int r = 0; r < g.nr; ++r) {   // a half-warp a row: all read, then all write
            T acc[16][SC];
            for (int grp = 0; grp < 16; ++grp) sep_row_sums(p, g, base, r, grp, acc[grp]);
            for (int grp = 0; grp < 16; ++grp) sep_row_write(g, base, r, grp, acc[grp]);
        }
        for (int ty = 0; ty < SBY; ++ty)
            for (int tx = 0; tx < SBX; ++tx)
                sep_columns<SR>(p, g, base, out, r0, c0, tx, ty);
    }
}

// Random 2-d launches whose filters are outer products (eighths: exact), or
// not: the factor flag, and the separable result against the reference.
template <class T>
static int check_sep(int trials)
{
    int separable = 0;
    for (int trial = 0; trial < trials; ++trial) {
        ga_conv_tile p;
        memset(&p, 0, sizeof(p));
        p.h = random_axis(trial % 5 == 0 ? 90 : 40, GA_CONV_SEP_K);
        p.w = random_axis(trial % 5 == 0 ? 150 : 70, GA_CONV_SEP_K);
        p.mode = (int)rnd(0, 4);
        p.flags = (int)rnd(0, 1) * GA_CONV_FLIP;
        p.kh_chunk = (int)p.h.k;
        p.kw_chunk = (int)p.w.k;
        p.divisor = rnd(0, 3) ? 0.0 : (double)rnd(1, 9);
        T cval = rnd_value<T>();
        p.cval = as_scalar(cval);
        const int kind = trial % 6;     // 0-3 outer product, 4 random, 5 a NaN or all zero
        std::vector<T> u(p.h.k), v(p.w.k), w(p.h.k * p.w.k);
        for (auto &e : u) e = rnd_value<T>();
        for (auto &e : v) e = rnd_value<T>();
        for (int64_t i = 0; i < p.h.k; ++i)
            for (int64_t j = 0; j < p.w.k; ++j)
                w[i * p.w.k + j] = kind < 4 ? u[i] * v[j] : kind == 4 ? rnd_value<T>() : T(0);
        if (kind == 5 && trial % 12 == 5) w[rnd(0, (int64_t)w.size() - 1)] = (T)NAN;
        bool zero = true;
        for (auto e : w) zero = zero && e == T(0);
        const bool want_flag = kind < 4 && !zero;
        std::vector<T> fac(1 + p.h.k + p.w.k, poison<T>());
        emulate_factor(p, w.data(), fac.data(), (int)rnd(1, 64));
        if ((fac[0] != T(0)) != want_flag && !(kind == 4 && (p.h.k == 1 || p.w.k == 1))) {
            printf("sep factor flag %g, want %d (type size %zu): kh %lld kw %lld kind %d\n",
                   (double)fac[0], want_flag, sizeof(T), (long long)p.h.k, (long long)p.w.k, kind);
            return 1;
        }
        if (fac[0] == T(0)) continue;
        ++separable;
        std::vector<T> x(p.h.n_in * p.w.n_in), out(p.h.n_out * p.w.n_out, poison<T>());
        for (auto &e : x) e = rnd_value<T>();
        if (trial % 2) emulate_sep<T, 8, 4>(p, x.data(), fac.data(), out.data());
        else emulate_sep<T, 16, 2>(p, x.data(), fac.data(), out.data());
        std::vector<T> ref = reference<T>({p.h.n_in, p.w.n_in}, {p.h.n_out, p.w.n_out},
                                          {p.h.k, p.w.k}, {p.h.off, p.w.off}, x, w, p.mode, cval,
                                          p.flags & GA_CONV_FLIP, false);
        // The factors v[j] / v[q] round, so the bound is a few ulps of the
        // sum of |terms|, not of the (possibly cancelling) result.
        std::vector<T> xa(x), wa(w);
        for (auto &e : xa) e = std::fabs(e);
        for (auto &e : wa) e = std::fabs(e);
        std::vector<T> mag = reference<T>({p.h.n_in, p.w.n_in}, {p.h.n_out, p.w.n_out},
                                          {p.h.k, p.w.k}, {p.h.off, p.w.off}, xa, wa, p.mode,
                                          std::fabs(cval), p.flags & GA_CONV_FLIP, false);
        const double eps = sizeof(T) == 4 ? 1.2e-7 : 2.3e-16;
        for (size_t i = 0; i < ref.size(); ++i) {
            T want = p.divisor != 0.0 ? cv_divide(ref[i], p.divisor) : ref[i];
            const double bound = 64 * eps * (1.0 + (double)mag[i]) / (p.divisor ? p.divisor : 1.0);
            if (!(std::fabs((double)out[i] - (double)want) <= bound)) {
                printf("sep mismatch (type size %zu) at %zu: h (%lld %lld %lld %lld) "
                       "w (%lld %lld %lld %lld) mode %s flags %d\n", sizeof(T), i,
                       (long long)p.h.n_in, (long long)p.h.n_out, (long long)p.h.k,
                       (long long)p.h.off, (long long)p.w.n_in, (long long)p.w.n_out,
                       (long long)p.w.k, (long long)p.w.off, mode_name[p.mode], p.flags);
                return 1;
            }
        }
    }
    printf("separable kernel, element size %zu: %d random configurations match (%d factored)\n",
           sizeof(T), trials, separable);
    return 0;
}

// ------------------------------------------------------------ column kernel

template <class T>
static void emulate_cols(const ga_conv_cols &p, int vec, const T *x, const T *w, T *out)
{
    constexpr int V = 16 / sizeof(T);
    ga_conv_cols q = p;
    q.vec = vec;
    for (int64_t b = 0; b < ga_conv_cols_blocks(&q); ++b) {
        int64_t po, i0, c0;
        cols_block(q, b, vec, &po, &i0, &c0);
        for (int tx = 0; tx < CBX; ++tx) {
            if (vec == V) cols_thread<T, V>(q, x, w, out, po, i0, c0, tx);
            else cols_thread<T, 1>(q, x, w, out, po, i0, c0, tx);
        }
    }
}

template <class T>
static int check_cols(int trials)
{
    constexpr int V = 16 / sizeof(T);
    for (int trial = 0; trial < trials; ++trial) {
        ga_conv_cols p;
        memset(&p, 0, sizeof(p));
        p.outer = rnd(1, 3);
        p.h = random_axis(trial % 5 == 0 ? 90 : 30, trial % 7 == 0 ? 60 : 17);
        p.cols = trial % 3 == 0 ? rnd(1, 9) : V * rnd(1, trial % 4 == 0 ? 80 : 6);
        p.mode = (int)rnd(0, 4);
        p.flags = (int)rnd(0, 1) * GA_CONV_FLIP;
        p.run = (int)(CC * rnd(1, 4));
        p.divisor = rnd(0, 1) ? 0.0 : (double)rnd(1, 9);
        int vec = p.cols % V == 0 && rnd(0, 1) ? V : 1;
        T cval = rnd_value<T>();
        p.cval = as_scalar(cval);
        std::vector<T> x(p.outer * p.h.n_in * p.cols), w(p.h.k),
            out(p.outer * p.h.n_out * p.cols, poison<T>());
        for (auto &v : x) v = rnd_value<T>();
        for (auto &v : w) v = rnd_value<T>();
        emulate_cols(p, vec, x.data(), w.data(), out.data());
        std::vector<T> ref = reference<T>({p.outer, p.h.n_in, p.cols}, {p.outer, p.h.n_out, p.cols},
                                          {1, p.h.k, 1}, {0, p.h.off, 0}, x, w, p.mode, cval,
                                          p.flags & GA_CONV_FLIP, false);
        for (size_t i = 0; i < ref.size(); ++i) {
            T want = p.divisor != 0.0 ? cv_divide(ref[i], p.divisor) : ref[i];
            if (!close(out[i], want)) {
                printf("cols mismatch (type size %zu) at %zu: outer %lld h (%lld %lld %lld %lld) "
                       "cols %lld mode %s flags %d run %d vec %d\n", sizeof(T), i,
                       (long long)p.outer, (long long)p.h.n_in, (long long)p.h.n_out,
                       (long long)p.h.k, (long long)p.h.off, (long long)p.cols,
                       mode_name[p.mode], p.flags, p.run, vec);
                return 1;
            }
        }
    }
    printf("column kernel, element size %zu: %d random configurations match\n", sizeof(T), trials);
    return 0;
}

// ------------------------------------------------------------ rank filter --

template <class V, class U>
static int check_rank(int trials, int kind)
{
    for (int trial = 0; trial < trials; ++trial) {
        ga_rank_filter p;
        memset(&p, 0, sizeof(p));
        p.ndim = (int)rnd(1, 3);
        int64_t n = 1;
        std::vector<int64_t> fshape(p.ndim), origin(p.ndim);
        for (int d = 0; d < p.ndim; ++d) {
            p.shape[d] = rnd(1, p.ndim == 1 ? 60 : 12);
            n *= p.shape[d];
            fshape[d] = rnd(1, trial % 4 == 0 ? 9 : 4);
            origin[d] = rnd(-(fshape[d] / 2), (fshape[d] - 1) / 2);
        }
        // footprint: random subset, never empty
        std::vector<std::vector<int64_t>> taps;
        int64_t fsize = 1;
        for (int d = 0; d < p.ndim; ++d) fsize *= fshape[d];
        for (int64_t t = 0; t < fsize; ++t) {
            if (rnd(0, 3) == 0 && !(t == fsize - 1 && taps.empty())) continue;
            std::vector<int64_t> q(p.ndim);
            int64_t s = t;
            for (int d = p.ndim - 1; d >= 0; --d) {
                q[d] = s % fshape[d] - fshape[d] / 2 - origin[d];
                s /= fshape[d];
            }
            taps.push_back(q);
        }
        p.ntaps = (int64_t)taps.size();
        int64_t pick = rnd(0, 3);
        p.rank = pick == 0 ? 0 : pick == 1 ? p.ntaps - 1 : rnd(0, p.ntaps - 1);
        p.mode = (int)rnd(0, 4);
        p.kind = kind;
        V cval = (V)rnd(-20, 20);
        if (kind == 0) cval = (V)rnd(0, 20);
        p.cval = as_scalar(cval);
        std::vector<int64_t> flat;
        for (int d = 0; d < p.ndim; ++d) {
            p.lo[d] = INT64_MAX; p.hi[d] = INT64_MIN;
        }
        for (auto &q : taps) {
            int64_t f = 0, stride = 1;    // flat offset: sum of q[d] * stride[d]
            for (int d = p.ndim - 1; d >= 0; --d) {
                p.lo[d] = std::min(p.lo[d], q[d]);
                p.hi[d] = std::max(p.hi[d], q[d]);
                f += q[d] * stride;
                stride *= p.shape[d];
            }
            for (int d = 0; d < p.ndim; ++d) flat.push_back(q[d]);
            flat.push_back(f);
        }
        std::vector<V> x(n), out(n);
        for (auto &v : x) v = kind == 0 ? (V)rnd(0, 30) : (V)rnd(-30, 30);
        for (int64_t i = 0; i < n; ++i) {
            U key = rank_select<U>(p, reinterpret_cast<const U *>(x.data()), flat.data(), i);
            U bits = rk_unkey(key, kind);
            memcpy(&out[i], &bits, sizeof(U));
        }
        for (int64_t i = 0; i < n; ++i) {
            std::vector<V> win;
            std::vector<int64_t> c(p.ndim);
            int64_t r = i;
            for (int d = p.ndim - 1; d >= 0; --d) { c[d] = r % p.shape[d]; r /= p.shape[d]; }
            for (auto &q : taps) {
                int64_t idx = 0;
                bool constant = false;
                for (int d = 0; d < p.ndim; ++d) {
                    int64_t gi = ga_ext_index<int64_t>(c[d] + q[d], p.shape[d], p.mode);
                    if (gi < 0) { constant = true; break; }
                    idx = idx * p.shape[d] + gi;
                }
                win.push_back(constant ? cval : x[idx]);
            }
            std::sort(win.begin(), win.end());
            if (!(win[p.rank] == out[i])) {
                printf("rank mismatch (size %zu kind %d) at %lld: ndim %d ntaps %lld rank %lld "
                       "mode %s: got %g want %g\n", sizeof(U), kind, (long long)i, p.ndim,
                       (long long)p.ntaps, (long long)p.rank, mode_name[p.mode],
                       (double)out[i], (double)win[p.rank]);
                return 1;
            }
        }
    }
    printf("rank filter, element size %zu kind %d: %d random configurations match\n", sizeof(U),
           kind, trials);
    return 0;
}

// Every footprint size path (min/max, counting, bisection) on one 1-D case
// with more taps than GA_RANK_LOCAL.
static int check_rank_large()
{
    ga_rank_filter p;
    memset(&p, 0, sizeof(p));
    p.ndim = 1;
    p.shape[0] = 300;
    p.ntaps = 101;
    p.lo[0] = -50;
    p.hi[0] = 50;
    p.mode = GA_EXT_MIRROR;
    p.kind = 2;
    std::vector<int64_t> flat;
    for (int64_t q = -50; q <= 50; ++q) { flat.push_back(q); flat.push_back(q); }
    std::vector<float> x(300);
    for (auto &v : x) v = (float)rnd(-1000, 1000) / 7.0f;
    for (int64_t rank : {0, 1, 50, 99, 100}) {
        p.rank = rank;
        for (int64_t i = 0; i < 300; ++i) {
            uint32_t key = rank_select<uint32_t>(p, reinterpret_cast<const uint32_t *>(x.data()),
                                                 flat.data(), i);
            uint32_t bits = rk_unkey(key, 2);
            float got;
            memcpy(&got, &bits, 4);
            std::vector<float> win;
            for (int64_t q = -50; q <= 50; ++q)
                win.push_back(x[ga_ext_index<int64_t>(i + q, 300, GA_EXT_MIRROR)]);
            std::sort(win.begin(), win.end());
            if (got != win[rank]) {
                printf("large rank mismatch: rank %lld at %lld: got %g want %g\n",
                       (long long)rank, (long long)i, got, win[rank]);
                return 1;
            }
        }
    }
    printf("rank filter, 101 taps (bisection path): match\n");
    return 0;
}

int main()
{
    int bad = 0;
    bad |= check_line<float>(300, false);
    bad |= check_line<double>(300, false);
    bad |= check_line<int64_t>(200, false);
    bad |= check_line<ga_c64>(100, true);
    bad |= check_line<ga_c128>(100, true);
    bad |= check_tile<float>(150);
    bad |= check_tile<double>(150);
    bad |= check_tile<int64_t>(80);
    bad |= check_sep<float>(150);
    bad |= check_sep<double>(150);
    bad |= check_cols<float>(200);
    bad |= check_cols<double>(200);
    bad |= check_cols<int64_t>(100);
    bad |= check_rank<float, uint32_t>(300, 2);
    bad |= check_rank<double, uint64_t>(200, 2);
    bad |= check_rank<int8_t, uint8_t>(200, 1);
    bad |= check_rank<uint16_t, uint16_t>(200, 0);
    bad |= check_rank<int64_t, uint64_t>(200, 1);
    bad |= check_rank_large();
    if (bad) {
        printf("FAILED\n");
        return 1;
    }
    printf("all kernels match their references\n");
    return 0;
}
