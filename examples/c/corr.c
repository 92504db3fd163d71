/* A correlator file from C, compiled and run by .ci/run (also under valgrind): open
 * examples/data/pion.corr.json, print the planner's report, run it on the host backend, read
 * every correlator, and check every value against this program's own evaluation.
 *
 * The check is independent of memhc: the file's nodes are seeded ("data": {"seed": S}), and
 * docs/correlator-format.md defines seeded values exactly (SplitMix64), so the code below
 * regenerates each node, builds its 4N x 4N matrix M[4a + i][4b + j] = node[4a + b][i][j]
 * and evaluates the file's graphs by plain matrix products and traces. The graphs are
 * written out by hand below as the file gives them (keep the two equal). memhc's own dense
 * reference (memhc_corr_verify) is checked as well, and so is a run without sharing.
 *
 * Usage: corr [FILE [OUT]] (FILE defaults to examples/data/pion.corr.json, read from the
 * repository root; OUT, if given, receives the correlators: .json or .csv). The block between
 * the two "README" markers is the README's C correlator example (keep the two equal). */

#include <memhc.h>
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { N = 4, D = 4 * N, MAX_TIMES = 16 };

/* ---- The independent evaluation ------------------------------------------------------- */

static uint64_t state;

static uint64_t splitmix64(void) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(void) { return (double)(splitmix64() >> 11) * 0x1p-52 - 1.0; }

/* The big matrix of the seeded meson node of 16 spins of N x N. */
static void node(uint64_t seed, double complex m[D][D]) {
    state = seed;
    for (int s = 0; s < 16; s++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                double re = uniform(), im = uniform();
                m[(s / 4) * N + i][(s % 4) * N + j] = re + im * I;
            }
}

static void mul(double complex a[D][D], double complex b[D][D], double complex out[D][D]) {
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) {
            double complex sum = 0;
            for (int k = 0; k < D; k++) sum += a[i][k] * b[k][j];
            out[i][j] = sum;
        }
}

static double complex trace(double complex a[D][D]) {
    double complex t = 0;
    for (int i = 0; i < D; i++) t += a[i][i];
    return t;
}

struct expected {
    const char *name;
    unsigned source, sink;
    double complex value;
    int seen;
};

/* The file's correlators, graph by graph: pi_t0, pi_t2, pi_t3, rho_t3 have seeds 11..14. */
static void evaluate(struct expected want[3]) {
    static double complex p0[D][D], p2[D][D], p3[D][D], r3[D][D], x[D][D], y[D][D], z[D][D];
    node(11, p0);
    node(12, p2);
    node(13, p3);
    node(14, r3);
    mul(p0, p2, x);
    double complex conn_02 = trace(x);             /* Tr(P0 P2) */
    mul(x, p3, y);
    double complex tri_03 = 0.5 * trace(y);        /* 0.5 Tr(P0 P2 P3) */
    mul(y, r3, z);
    double complex box_03 = 0.25 * I * trace(z);   /* 0.25i Tr(P0 P2 P3 R3) */
    mul(p0, p3, x);
    double complex conn_03 = trace(x);             /* Tr(P0 P3) */
    double complex disc_03 = -trace(p0) * trace(p3);
    want[0] = (struct expected){"C_pi_pi", 0, 2, conn_02, 0};
    want[1] = (struct expected){"C_pi_pi", 0, 3, conn_03 + disc_03, 0};
    want[2] = (struct expected){"C_pi_3pt", 0, 3, tri_03 + box_03, 0};
}

/* ---- memhc ---------------------------------------------------------------------------- */

static int fail(const char *what) {
    fprintf(stderr, "corr: %s: %s\n", what, memhc_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "examples/data/pion.corr.json";
    struct expected want[3];
    evaluate(want);
    int bad = 0;

    /* README */
    memhc_corr corr;
    memhc_corr_plan_report rep;
    memhc_corr_results res;
    size_t count;
    if (memhc_corr_open(path, NULL, &corr) || memhc_corr_plan(corr, &rep)
        || memhc_corr_run(corr, NULL, &res)      /* host backend; budget: the plan's peak */
        || memhc_corr_results_count(res, &count)) {
        fprintf(stderr, "memhc: %s\n", memhc_last_error());
        return 1;
    }
    printf("%llu contractions (%llu without sharing), peak %llu bytes\n",
           (unsigned long long)rep.contractions,
           (unsigned long long)rep.contractions_without_sharing,
           (unsigned long long)rep.peak_bytes);
    for (size_t i = 0; i < count; i++) {
        char name[64];                              /* or ask the size: buf NULL, capacity 0 */
        size_t len;
        memhc_corr_time t[16];
        memhc_complex v[16];
        if (memhc_corr_results_name(res, i, name, sizeof name, NULL)
            || memhc_corr_results_len(res, i, &len) || len > 16
            || memhc_corr_results_values(res, i, t, v, len)) {
            fprintf(stderr, "memhc: %s\n", memhc_last_error());
            return 1;
        }
        for (size_t k = 0; k < len; k++)
            printf("%s(%u, %u) = %.16e %+.16ei\n", name, t[k].source, t[k].sink, v[k].re, v[k].im);
    }
    /* README */

    /* Every value against the plain loops, each correlator found by its name. */
    for (int w = 0; w < 3; w++) {
        size_t i, len;
        memhc_corr_time t[MAX_TIMES];
        memhc_complex v[MAX_TIMES];
        if (memhc_corr_results_find(res, want[w].name, &i) || memhc_corr_results_len(res, i, &len)
            || len > MAX_TIMES || memhc_corr_results_values(res, i, t, v, len))
            return fail(want[w].name);
        for (size_t k = 0; k < len; k++) {
            if (t[k].source != want[w].source || t[k].sink != want[w].sink) continue;
            double complex got = v[k].re + v[k].im * I;
            double err = cabs(got - want[w].value) / cabs(want[w].value);
            want[w].seen++;
            if (!(err <= 1e-12)) {
                fprintf(stderr, "corr: %s(%u, %u): relative error %.3e against plain loops\n",
                        want[w].name, want[w].source, want[w].sink, err);
                bad = 1;
            }
        }
        if (want[w].seen != 1) {
            fprintf(stderr, "corr: %s(%u, %u) found %d times\n", want[w].name, want[w].source,
                    want[w].sink, want[w].seen);
            bad = 1;
        }
    }

    /* memhc's own dense reference, and a run without sharing, agree too. */
    double err_ref = 0, err_plain = 0;
    memhc_corr_options no_sharing = memhc_corr_options_default();
    no_sharing.sharing = 0;
    memhc_corr plain;
    memhc_corr_results plain_res;
    memhc_config cfg = memhc_config_default();
    cfg.policy = "belady";
    if (memhc_corr_verify(corr, res, &err_ref)) return fail("verify");
    if (memhc_corr_open(path, &no_sharing, &plain)) return fail("open without sharing");
    if (memhc_corr_run(plain, &cfg, &plain_res)) return fail("run without sharing");
    if (memhc_corr_results_compare(plain_res, res, &err_plain)) return fail("compare");
    printf("against memhc's dense reference: %.1e; without sharing: %.1e\n", err_ref, err_plain);
    if (!(err_plain <= 1e-12)) bad = 1;

    /* A name that is not there is a status and a message, not a crash. */
    size_t index;
    memhc_status s = memhc_corr_results_find(res, "C_rho_rho", &index);
    printf("find C_rho_rho: %s (%s)\n", memhc_status_name(s), memhc_last_error());
    if (s != MEMHC_STATUS_NOT_FOUND) bad = 1;

    if (argc > 2 && memhc_corr_results_write(res, argv[2])) return fail("write");
    memhc_corr_results_release(plain_res);
    memhc_corr_release(plain);
    memhc_corr_results_release(res);
    memhc_corr_release(corr);
    puts(bad ? "corr: FAILED" : "corr: every value matches plain loops within 1e-12");
    return bad;
}
