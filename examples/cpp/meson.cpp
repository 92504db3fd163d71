// A meson contraction and a trace through memhc's C++ layer (include/memhc.hpp), checked
// against plain loops.
//
// Two meson nodes A and B (16 spin components of N x N complex doubles, spin s = 4 al + be)
// are registered; memhc computes C = A * B with the 4x4 spin-block mapping (out(al, ga) +=
// A(al, be) B(be, ga)) and Tr(C * B) over spin and distillation indices; this program
// computes both again with its own loops and compares. It also runs a sparse term list as a
// vector of two contractions, and shows that misuse (a use after release) throws
// memhc::error with its status. Exit code 0 when everything agrees.
#include <memhc.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using memhc::complex;

namespace {

constexpr std::size_t kN = 8;        // distillation size
constexpr std::size_t kE = kN * kN;  // elements per spin component

std::vector<complex> random_meson(unsigned seed) {
  std::vector<complex> v(16 * kE);
  for (std::size_t i = 0; i < v.size(); ++i) {
    double x = static_cast<double>(i) * 0.618 + seed;
    v[i] = complex(std::sin(x), std::cos(1.7 * x));
  }
  return v;
}

// out[o] += a[i] * b[j] for the N x N row-major components o, i, j.
void gemm_acc(std::vector<complex>& out, std::size_t o, const std::vector<complex>& a,
              std::size_t i, const std::vector<complex>& b, std::size_t j) {
  for (std::size_t r = 0; r < kN; ++r)
    for (std::size_t c = 0; c < kN; ++c)
      for (std::size_t k = 0; k < kN; ++k)
        out[o * kE + r * kN + c] += a[i * kE + r * kN + k] * b[j * kE + k * kN + c];
}

double rel_error(const std::vector<complex>& got, const std::vector<complex>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff += std::norm(got[i] - want[i]);
    norm += std::norm(want[i]);
  }
  return std::sqrt(diff / norm);
}

}  // namespace

int main() try {
  memhc::config cfg;  // host backend
  cfg.budget_bytes = 64ull << 20;
  cfg.policy = "pp-lru";
  memhc::runtime rt(cfg);

  const std::vector<complex> a = random_meson(1), b = random_meson(2);
  memhc::node na = rt.register_node(16, {kN, kN}, a);  // copied
  memhc::node nb = rt.register_node(16, {kN, kN}, b);

  // The meson contraction, and its reference.
  memhc::plan meson = rt.meson4x4();
  memhc::node nc = rt.contract(na, nb, meson);
  const std::vector<complex> got = rt.read(nc);
  std::vector<complex> want(16 * kE);
  for (std::size_t al = 0; al < 4; ++al)
    for (std::size_t ga = 0; ga < 4; ++ga)
      for (std::size_t be = 0; be < 4; ++be)
        gemm_acc(want, 4 * al + ga, a, 4 * al + be, b, 4 * be + ga);
  const double err = rel_error(got, want);
  const memhc::shape sc = rt.shape(nc);
  const bool shape_ok = sc.spins == 16 && sc.dims == std::vector<std::size_t>{kN, kN};

  // Tr(C * B) over spin and distillation indices, and its reference.
  const complex t = rt.trace_meson4x4(nc, nb, 1);
  complex t_want = 0;
  for (std::size_t al = 0; al < 4; ++al)
    for (std::size_t be = 0; be < 4; ++be)
      for (std::size_t i = 0; i < kN; ++i)
        for (std::size_t k = 0; k < kN; ++k)
          t_want += want[(4 * al + be) * kE + i * kN + k] * b[(4 * be + al) * kE + k * kN + i];
  const double t_err = std::abs(t - t_want) / std::abs(t_want);

  // A sparse mapping as a term list, run as a vector of two contractions on two streams;
  // the second result is read into a caller's buffer through a view.
  const std::vector<memhc::term> terms = {{0, 0, 5}, {0, 1, 9}, {3, 15, 15}};
  memhc::plan sparse = rt.make_plan(terms, 4);
  std::vector<memhc::node> outs = rt.run_vector({{na, nb, sparse}, {nb, na, sparse}});
  std::vector<complex> got2(4 * kE), want2(4 * kE);
  rt.read(outs[1], got2);
  for (const memhc::term& term : terms) gemm_acc(want2, term.out, b, term.a, a, term.b);
  const double err2 = rel_error(got2, want2);

  const memhc::stats stats = rt.stats();
  rt.audit();

  // Misuse throws memhc::error with the C status and memhc's message, never crashes.
  const memhc_object stale = outs[0].get();
  outs[0].release();
  bool refused = false;
  try {
    rt.read(memhc::node(rt.get(), stale));  // a node owning the released handle
  } catch (const memhc::error& e) {
    refused = e.status() == MEMHC_STATUS_INVALID_HANDLE;
    std::printf("use after release: %s\n", e.what());
  }

  std::printf("memhc %s: contraction error %.3g, trace error %.3g, sparse error %.3g\n",
              memhc::version().c_str(), err, t_err, err2);
  std::printf("hits %llu, misses %llu, flops %llu\n",
              static_cast<unsigned long long>(stats.hits),
              static_cast<unsigned long long>(stats.misses),
              static_cast<unsigned long long>(stats.flops));
  const bool ok = err < 1e-12 && t_err < 1e-12 && err2 < 1e-12 && refused && shape_ok;
  std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
  // rt, the nodes and the plans release themselves here (in reverse order of declaration).
} catch (const memhc::error& e) {
  std::fprintf(stderr, "memhc: %s\n", e.what());
  return 1;
}
