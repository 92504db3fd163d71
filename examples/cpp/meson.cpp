// A meson contraction and a trace through memhc's C ABI, checked against plain loops.
//
// Two meson nodes A and B (16 spin components of N x N complex doubles, spin s = 4 al + be)
// are registered; memhc computes C = A * B with the 4x4 spin-block mapping (out(al, ga) +=
// A(al, be) B(be, ga)) and Tr(C * B) over spin and distillation indices; this program
// computes both again with its own loops and compares. It also runs a sparse term list as a
// vector of two contractions, and shows that misuse (a double release) is a status, not a
// crash. Exit code 0 when everything agrees.
#include <memhc.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <vector>

using cplx = std::complex<double>;

namespace {

// Aborts with memhc's message when a call fails.
void check(memhc_status status, const char* what) {
  if (status != MEMHC_STATUS_OK) {
    std::fprintf(stderr, "%s failed: %s: %s\n", what, memhc_status_name(status),
                 memhc_last_error());
    std::exit(1);
  }
}

constexpr std::size_t kN = 8;          // distillation size
constexpr std::size_t kE = kN * kN;    // elements per spin component

std::vector<cplx> random_meson(unsigned seed) {
  std::vector<cplx> v(16 * kE);
  for (std::size_t i = 0; i < v.size(); ++i) {
    double x = static_cast<double>(i) * 0.618 + seed;
    v[i] = cplx(std::sin(x), std::cos(1.7 * x));
  }
  return v;
}

// out[o] += a[i] * b[j] for the N x N row-major components o, i, j.
void gemm_acc(std::vector<cplx>& out, std::size_t o, const std::vector<cplx>& a, std::size_t i,
              const std::vector<cplx>& b, std::size_t j) {
  for (std::size_t r = 0; r < kN; ++r)
    for (std::size_t c = 0; c < kN; ++c)
      for (std::size_t k = 0; k < kN; ++k)
        out[o * kE + r * kN + c] += a[i * kE + r * kN + k] * b[j * kE + k * kN + c];
}

double rel_error(const std::vector<cplx>& got, const std::vector<cplx>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff += std::norm(got[i] - want[i]);
    norm += std::norm(want[i]);
  }
  return std::sqrt(diff / norm);
}

}  // namespace

int main() {
  memhc_config cfg = memhc_config_default();
  cfg.backend = "host";
  cfg.budget_bytes = 64ull << 20;
  cfg.policy = "pp-lru";
  memhc_runtime rt;
  check(memhc_runtime_create(&cfg, &rt), "memhc_runtime_create");

  const std::vector<cplx> a = random_meson(1), b = random_meson(2);
  const std::size_t dims[2] = {kN, kN};
  memhc_object oa, ob;
  // std::complex<double> has memhc_complex's layout: pass the arrays by a pointer cast.
  check(memhc_register(rt, 16, dims, 2, reinterpret_cast<const memhc_complex*>(a.data()),
                       a.size(), &oa), "memhc_register");
  check(memhc_register(rt, 16, dims, 2, reinterpret_cast<const memhc_complex*>(b.data()),
                       b.size(), &ob), "memhc_register");

  // The meson contraction, and its reference.
  memhc_plan meson;
  check(memhc_plan_meson4x4(rt, &meson), "memhc_plan_meson4x4");
  const memhc_contraction c = {oa, ob, meson, 0, 0};
  memhc_object oc;
  check(memhc_contract(rt, &c, 0, &oc), "memhc_contract");
  std::size_t elems = 0;
  check(memhc_object_elements(rt, oc, &elems), "memhc_object_elements");
  std::vector<cplx> got(elems);
  check(memhc_read(rt, oc, reinterpret_cast<memhc_complex*>(got.data()), got.size()),
        "memhc_read");
  std::vector<cplx> want(16 * kE);
  for (std::size_t al = 0; al < 4; ++al)
    for (std::size_t ga = 0; ga < 4; ++ga)
      for (std::size_t be = 0; be < 4; ++be) gemm_acc(want, 4 * al + ga, a, 4 * al + be, b, 4 * be + ga);
  const double err = rel_error(got, want);

  // Tr(C * B) over spin and distillation indices, and its reference.
  memhc_complex t;
  check(memhc_trace_meson4x4(rt, oc, ob, 1, &t), "memhc_trace_meson4x4");
  cplx t_want = 0;
  for (std::size_t al = 0; al < 4; ++al)
    for (std::size_t be = 0; be < 4; ++be)
      for (std::size_t i = 0; i < kN; ++i)
        for (std::size_t k = 0; k < kN; ++k)
          t_want += want[(4 * al + be) * kE + i * kN + k] * b[(4 * be + al) * kE + k * kN + i];
  const double t_err = std::abs(cplx(t.re, t.im) - t_want) / std::abs(t_want);

  // A sparse mapping as a term list, run as a vector of two contractions on two streams.
  const memhc_term terms[3] = {{0, 0, 5}, {0, 1, 9}, {3, 15, 15}};
  memhc_plan sparse;
  check(memhc_plan_create(rt, 4, terms, 3, &sparse), "memhc_plan_create");
  const memhc_contraction vec[2] = {{oa, ob, sparse, 0, 0}, {ob, oa, sparse, 0, 0}};
  memhc_object outs[2];
  check(memhc_run_vector(rt, vec, 2, outs, 2), "memhc_run_vector");
  std::vector<cplx> got2(4 * kE), want2(4 * kE);
  check(memhc_read(rt, outs[1], reinterpret_cast<memhc_complex*>(got2.data()), got2.size()),
        "memhc_read");
  for (const memhc_term& term : terms) gemm_acc(want2, term.out, b, term.a, a, term.b);
  const double err2 = rel_error(got2, want2);

  memhc_stats stats;
  check(memhc_get_stats(rt, &stats), "memhc_stats");
  check(memhc_audit(rt), "memhc_audit");

  // Misuse is a status and a message, never a crash.
  check(memhc_release(rt, outs[0]), "memhc_release");
  const memhc_status again = memhc_release(rt, outs[0]);
  const bool refused = again == MEMHC_STATUS_INVALID_HANDLE;
  std::printf("double release: %s (%s)\n", memhc_status_name(again), memhc_last_error());

  for (memhc_object o : {oa, ob, oc, outs[1]}) check(memhc_release(rt, o), "memhc_release");
  check(memhc_plan_release(rt, meson), "memhc_plan_release");
  check(memhc_plan_release(rt, sparse), "memhc_plan_release");
  check(memhc_runtime_destroy(rt), "memhc_runtime_destroy");

  std::printf("memhc %s: contraction error %.3g, trace error %.3g, sparse error %.3g\n",
              memhc_version(), err, t_err, err2);
  std::printf("hits %llu, misses %llu, flops %llu\n",
              static_cast<unsigned long long>(stats.hits),
              static_cast<unsigned long long>(stats.misses),
              static_cast<unsigned long long>(stats.flops));
  const bool ok = err < 1e-12 && t_err < 1e-12 && err2 < 1e-12 && refused;
  std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
