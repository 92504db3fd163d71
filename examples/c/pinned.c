/* Page-locked buffers from C, compiled and run by .ci/run (also under valgrind): two meson
 * nodes written straight into the backend's host memory and registered without a copy, their
 * 4x4 spin-block product taken back without a copy, and every value checked against this
 * program's own plain loops. On the host backend (as here) the buffers are ordinary memory;
 * on a GPU ("cuda", "rocm") they are page-locked, and the same calls work. The block between
 * the two "README" markers is the README's example (keep the two equal). */

#include <memhc.h>
#include <math.h>
#include <stdio.h>

enum { N = 4, LEN = 16 * N * N };

static double value(int i, double seed) { return sin(0.37 * (i + seed)); }

/* The values of a registered node, as this program wrote them: x(i) = value(i, seed) + i/2. */
static memhc_complex at(int i, double seed) {
    memhc_complex z = {value(i, seed), 0.5 * value(i, seed + 1.0)};
    return z;
}

/* A buffer of 16 spins of N x N filled in place with at(., seed), then registered. */
static int node(memhc_runtime rt, double seed, memhc_object *out) {
    size_t dims[2] = {N, N};
    /* README */
    memhc_host h;
    memhc_complex *p;
    size_t n;
    if (memhc_host_alloc(rt, 16, dims, 2, &h) || memhc_host_data(rt, h, &p, &n)) return 1;
    for (size_t i = 0; i < n; i++) p[i] = at((int)i, seed);  /* written in place */
    if (memhc_host_register(rt, h, out)) return 1;  /* no copy; h and p are dead now */
    /* README */
    return 0;
}

int main(void) {
    memhc_config cfg = memhc_config_default();
    cfg.host_memory = "pinned";                     /* results land in page-locked memory */
    memhc_runtime rt;
    memhc_object a, b, c;
    memhc_plan plan;
    memhc_host r;
    memhc_complex *v;
    size_t len;
    if (memhc_runtime_create(&cfg, &rt) || node(rt, 0.25, &a) || node(rt, 3.5, &b)
        || memhc_plan_meson4x4(rt, &plan)
        || memhc_contract(rt, &(memhc_contraction){a, b, plan, 0, 0}, 0, &c)
        || memhc_take_host(rt, c, &r)                 /* c is released; r holds its values */
        || memhc_host_data(rt, r, &v, &len) || len != LEN) {
        fprintf(stderr, "memhc: %s\n", memhc_last_error());
        return 1;
    }
    /* Plain loops: out(al, ga)[i][j] = sum_be sum_k A(al, be)[i][k] B(be, ga)[k][j]. */
    double err = 0.0, norm = 0.0;
    for (int al = 0; al < 4; al++)
        for (int ga = 0; ga < 4; ga++)
            for (int i = 0; i < N; i++)
                for (int j = 0; j < N; j++) {
                    double re = 0.0, im = 0.0;
                    for (int be = 0; be < 4; be++)
                        for (int k = 0; k < N; k++) {
                            memhc_complex x = at((4 * al + be) * N * N + i * N + k, 0.25);
                            memhc_complex y = at((4 * be + ga) * N * N + k * N + j, 3.5);
                            re += x.re * y.re - x.im * y.im;
                            im += x.re * y.im + x.im * y.re;
                        }
                    memhc_complex g = v[(4 * al + ga) * N * N + i * N + j];
                    err += (g.re - re) * (g.re - re) + (g.im - im) * (g.im - im);
                    norm += re * re + im * im;
                }
    if (memhc_host_free(rt, r) || memhc_audit(rt) || memhc_runtime_destroy(rt)) {
        fprintf(stderr, "memhc: %s\n", memhc_last_error());
        return 1;
    }
    printf("pinned: %d values, relative error %.1e\n", LEN, sqrt(err / norm));
    return sqrt(err / norm) < 1e-12 ? 0 : 1;
}
