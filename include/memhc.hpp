/*
 * memhc.hpp: the C++17 layer of memhc, header-only, over the C ABI of <memhc.h>.
 *
 * Link exactly as for the C ABI (libmemhc_capi; in CMake find_package(memhc) and
 * target_link_libraries(app PRIVATE memhc::memhc)); nothing else is compiled.
 *
 *   #include <memhc.hpp>
 *   memhc::config cfg;                      // host backend, 1 GiB, lru, optimal, 4 streams
 *   cfg.policy = "belady";
 *   memhc::runtime rt(cfg);
 *   std::vector<std::complex<double>> x(16 * 32 * 32, 1.0);
 *   memhc::node a = rt.register_node(16, {32, 32}, x);      // copied
 *   memhc::plan p = rt.meson4x4();
 *   memhc::node c = rt.contract(a, a, p);                    // stays on the device
 *   std::vector<std::complex<double>> values = rt.read(c);   // or rt.read(c, my_span)
 *   std::complex<double> t = rt.trace_meson4x4(c, a);
 *
 *   memhc::corr f("examples/data/pion.corr.json");          // load and plan
 *   memhc::corr_results r = f.run();                         // host backend, plan's peak
 *   for (std::size_t i = 0; i < r.size(); ++i) r.name(i), r.times(i), r.values(i);
 *
 * OWNERSHIP. memhc::runtime, node, plan, corr and corr_results own one C handle each and
 * release it in their destructor (memhc_runtime_destroy, memhc_release, memhc_plan_release,
 * memhc_corr_release, memhc_corr_results_release). They are move-only; a moved-from owner is
 * empty (`!owner`) and its destructor does nothing. Destruction order does not matter: a node
 * or plan that outlives its runtime holds a stale handle, which memhc refuses without
 * touching memory, so its destructor is harmless (destroying a runtime releases all its nodes
 * and plans at once). release() gives a handle back early and throws on failure; destructors
 * never throw. get() returns the C handle for calls this layer does not wrap; the owner keeps
 * owning it.
 *
 * ERRORS. Every call that fails throws memhc::error (derived from std::runtime_error), which
 * carries the C status (status(), and status_name(): "MEMHC_STATUS_DOES_NOT_FIT") and memhc's
 * one-line message (message()); what() is "MEMHC_STATUS_...: message". The statuses are those
 * <memhc.h> documents for each C function. A failed call changes nothing (see <memhc.h>,
 * ERRORS). Nothing else is thrown, except std::bad_alloc by the std::vector and std::string
 * this layer returns.
 *
 * VIEWS. memhc::span<T> is a pointer and a length: std::span<T> in C++20, a small type of the
 * same name and use in C++17 (from a pointer and a size, a std::vector, a std::array or a C
 * array; span<T> converts to span<const T>). Inputs are read during the call only (memhc
 * copies what it keeps); outputs are written during the call only. Element type:
 * memhc::complex, which is std::complex<double> (the layout of memhc_complex).
 *
 * THREADS. As the C ABI: any thread; calls on one runtime serialise; corr and corr_results
 * are immutable and may be shared between threads. The owners themselves are not
 * synchronised: do not move or destroy one while another thread uses it.
 */
#ifndef MEMHC_HPP
#define MEMHC_HPP

#include <memhc.h>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if __cplusplus >= 202002L && defined(__has_include)
#if __has_include(<span>)
#include <span>
#define MEMHC_HPP_STD_SPAN 1
#endif
#endif

namespace memhc {

/// A complex double, laid out as memhc_complex.
using complex = std::complex<double>;
static_assert(sizeof(complex) == sizeof(memhc_complex) && alignof(complex) <= alignof(memhc_complex),
              "std::complex<double> must have memhc_complex's layout");

/// One term of a spin mapping: out[t.out] += A[t.a] * B[t.b] (spin indices from 0).
using term = memhc_term;
/// One pair of a trace: Tr(A[p.a] * B[p.b]) is added.
using pair = memhc_pair;
/// A time pair of a correlator: (source, sink).
using corr_time = memhc_corr_time;
/// A snapshot of a runtime's statistics (see memhc_stats in <memhc.h>).
using stats = memhc_stats;
/// The planner's report of a correlator file (see memhc_corr_plan_report in <memhc.h>).
using plan_report = memhc_corr_plan_report;
/// A status code of the C ABI.
using status = memhc_status;

#ifdef MEMHC_HPP_STD_SPAN
/// A view of `size()` contiguous elements: std::span in C++20.
template <class T>
using span = std::span<T>;
#else
/// A view of `size()` contiguous elements (C++17 stand-in for std::span<T>, dynamic extent).
template <class T>
class span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using size_type = std::size_t;
  using pointer = T*;
  using reference = T&;
  using iterator = T*;

  /// The empty view.
  constexpr span() noexcept = default;
  /// `size` elements from `data` (which may be null when `size` is 0).
  constexpr span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
  /// A whole C array.
  template <std::size_t N>
  constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}
  /// A contiguous container: std::vector, std::array, std::string, another span.
  template <class C, class = std::enable_if_t<
                         !std::is_same_v<std::remove_cv_t<std::remove_reference_t<C>>, span> &&
                         std::is_convertible_v<decltype(std::declval<C&>().data()), T*>>,
            class = decltype(std::declval<C&>().size())>
  constexpr span(C& container) noexcept : data_(container.data()), size_(container.size()) {}
  /// A const container, for a view of const elements.
  template <class C, class U = T, class = std::enable_if_t<std::is_const_v<U>>,
            class = std::enable_if_t<
                std::is_convertible_v<decltype(std::declval<const C&>().data()), T*>>,
            class = decltype(std::declval<const C&>().size())>
  constexpr span(const C& container) noexcept
      : data_(container.data()), size_(container.size()) {}

  /// The first element's address.
  constexpr T* data() const noexcept { return data_; }
  /// The number of elements.
  constexpr std::size_t size() const noexcept { return size_; }
  /// Whether there are none.
  constexpr bool empty() const noexcept { return size_ == 0; }
  /// Element `i` (unchecked, as std::span).
  constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// Iterators.
  constexpr T* begin() const noexcept { return data_; }
  /// Iterators.
  constexpr T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};
#endif

/// What every failed memhc call throws: the C status and memhc's one-line message.
class error : public std::runtime_error {
 public:
  /// An error of status `s` with memhc's `message`.
  error(memhc_status s, const std::string& message)
      : std::runtime_error(std::string(memhc_status_name(s)) + ": " + message),
        status_(s),
        message_(message) {}
  /// The status the C call returned (never MEMHC_STATUS_OK).
  memhc_status status() const noexcept { return status_; }
  /// The status's name as <memhc.h> spells it: "MEMHC_STATUS_INVALID_HANDLE".
  const char* status_name() const noexcept { return memhc_status_name(status_); }
  /// memhc's message (memhc_last_error() right after the failed call).
  const std::string& message() const noexcept { return message_; }

 private:
  memhc_status status_;
  std::string message_;
};

namespace detail {

/// Throws memhc::error unless `s` is MEMHC_STATUS_OK.
inline void check(memhc_status s) {
  if (s != MEMHC_STATUS_OK) throw error(s, memhc_last_error());
}

inline const memhc_complex* c_ptr(const complex* p) noexcept {
  return reinterpret_cast<const memhc_complex*>(p);
}

inline memhc_complex* c_ptr(complex* p) noexcept { return reinterpret_cast<memhc_complex*>(p); }

/// A C handle owned by one object: move-only, released by `Release` on destruction.
template <class H>
class handle {
 public:
  handle() noexcept = default;
  explicit handle(H h) noexcept : h_(h) {}
  handle(handle&& o) noexcept : h_(o.h_) { o.h_ = H{0}; }
  handle& operator=(handle&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  H get() const noexcept { return h_; }
  H take() noexcept {
    H h = h_;
    h_ = H{0};
    return h;
  }
  explicit operator bool() const noexcept { return h_.handle != 0; }

 private:
  H h_{0};
};

}  // namespace detail

/// The library's version ("0.1.0").
inline std::string version() { return memhc_version(); }

/// How to create a runtime (memhc_config with owned strings). An empty string means the
/// library's default; 0 means the default for the numbers.
struct config {
  /// "host" (default: the CPU reference backend), "cuda" or "rocm" (loaded at run time;
  /// without a driver, library or device, runtime creation throws MEMHC_STATUS_UNAVAILABLE).
  std::string backend = "host";
  /// Device bytes the runtime may hold; 0: the device's free memory on a GPU, 1 GiB on the
  /// host backend.
  std::uint64_t budget_bytes = 0;
  /// "lru" (default), "pp-lru", "random", "mru", "car", "clock-pro" or "belady".
  std::string policy = "lru";
  /// "optimal" (default), "naive", "reorg", "reorg-sync" or "unified" (GPU backends only).
  std::string mode = "optimal";
  /// Streams contractions are spread over; 0: 4.
  std::uint32_t streams = 0;
  /// Seed of the "random" policy.
  std::uint64_t seed = 0;
  /// Where node data and results live on the host: "pageable" (default) or "pinned" (the
  /// backend's page-locked memory: every copy one DMA). Not with the mode "unified".
  std::string host_memory = "pageable";
  /// Prefetch: 0 (off, default), or a lookahead window in object uses within which copies
  /// are issued ahead of their use (correlator runs). With host_memory "pinned" and 12, the
  /// fast data path on a GPU.
  std::uint32_t prefetch = 0;

  /// The C configuration; its strings point into this object (valid while it lives unchanged).
  memhc_config c_config() const noexcept {
    memhc_config c = memhc_config_default();
    c.backend = backend.empty() ? nullptr : backend.c_str();
    c.budget_bytes = budget_bytes;
    c.policy = policy.empty() ? nullptr : policy.c_str();
    c.mode = mode.empty() ? nullptr : mode.c_str();
    if (streams != 0) c.streams = streams;
    c.seed = seed;
    c.host_memory = host_memory.empty() ? nullptr : host_memory.c_str();
    c.prefetch = prefetch;
    return c;
  }
};

/// The shape of a node: `spins` components of dimensions `dims` each.
struct shape {
  /// Spin components.
  std::size_t spins = 0;
  /// Dimensions of one component (row-major).
  std::vector<std::size_t> dims;
  /// Complex elements of the whole node: spins * dims[0] * ... .
  std::size_t elements() const noexcept {
    std::size_t n = spins;
    for (std::size_t d : dims) n *= d;
    return n;
  }
};

/// A hadron node of one runtime (memhc_object): registered from host data or made by a
/// contraction; its values stay in the runtime until read. Released on destruction.
class node {
 public:
  /// An empty node (owns nothing).
  node() noexcept = default;
  /// Takes ownership of `object` of runtime `rt`.
  node(memhc_runtime rt, memhc_object object) noexcept : rt_(rt), h_(object) {}
  node(node&&) noexcept = default;
  node& operator=(node&& o) noexcept {
    node tmp(std::move(o));
    std::swap(rt_, tmp.rt_);
    std::swap(h_, tmp.h_);
    return *this;
  }
  ~node() {
    if (h_) memhc_release(rt_, h_.get());
  }
  /// Whether this owns a handle.
  explicit operator bool() const noexcept { return static_cast<bool>(h_); }
  /// The C handle (still owned by this node).
  memhc_object get() const noexcept { return h_.get(); }
  /// The handle of the runtime it belongs to.
  memhc_runtime runtime_handle() const noexcept { return rt_; }
  /// Releases the node now (its device memory goes back to the runtime's pool); throws
  /// MEMHC_STATUS_INVALID_HANDLE for an empty node or one whose runtime was destroyed.
  void release() { detail::check(memhc_release(rt_, h_.take())); }

 private:
  memhc_runtime rt_{0};
  detail::handle<memhc_object> h_;
};

/// A validated spin mapping of one runtime (memhc_plan), reusable by any number of
/// contractions. Released on destruction.
class plan {
 public:
  /// An empty plan (owns nothing).
  plan() noexcept = default;
  /// Takes ownership of `p` of runtime `rt`.
  plan(memhc_runtime rt, memhc_plan p) noexcept : rt_(rt), h_(p) {}
  plan(plan&&) noexcept = default;
  plan& operator=(plan&& o) noexcept {
    plan tmp(std::move(o));
    std::swap(rt_, tmp.rt_);
    std::swap(h_, tmp.h_);
    return *this;
  }
  ~plan() {
    if (h_) memhc_plan_release(rt_, h_.get());
  }
  /// Whether this owns a handle.
  explicit operator bool() const noexcept { return static_cast<bool>(h_); }
  /// The C handle (still owned by this plan).
  memhc_plan get() const noexcept { return h_.get(); }
  /// Releases the plan now (contractions that used it are unaffected); throws
  /// MEMHC_STATUS_INVALID_HANDLE for an empty plan or one whose runtime was destroyed.
  void release() { detail::check(memhc_plan_release(rt_, h_.take())); }

 private:
  memhc_runtime rt_{0};
  detail::handle<memhc_plan> h_;
};

/// One contraction of a vector (runtime::run_vector): out[t.out] += A[t.a] * B[t.b] for every
/// term of the plan. It refers to the nodes and the plan by handle: they must stay alive
/// until run_vector returns.
struct contraction {
  /// `a` times `b` by `p`; `a_split`/`b_split`: leading dimensions of a component forming the
  /// matrix rows (0 or 1 for mesons; 1 or 2 for a baryon's N x N^2 or N^2 x N view).
  contraction(const node& a, const node& b, const plan& p, std::size_t a_split = 0,
              std::size_t b_split = 0) noexcept
      : c{a.get(), b.get(), p.get(), a_split, b_split} {}
  /// The C description.
  memhc_contraction c;
};

/// A memhc runtime (memhc_runtime): one device budget on one backend, with its nodes and
/// plans. Destroyed (its work waited for, its device memory returned, every node and plan of
/// it released) on destruction.
class runtime {
 public:
  /// Creates a runtime; throws MEMHC_STATUS_UNKNOWN_NAME (backend, policy or mode),
  /// MEMHC_STATUS_UNAVAILABLE (the backend cannot open here: the message says why) or
  /// MEMHC_STATUS_INVALID_ARGUMENT (a configuration out of range).
  explicit runtime(const config& cfg = config{}) {
    const memhc_config c = cfg.c_config();
    memhc_runtime rt{0};
    detail::check(memhc_runtime_create(&c, &rt));
    h_ = detail::handle<memhc_runtime>(rt);
  }
  runtime(runtime&&) noexcept = default;
  runtime& operator=(runtime&& o) noexcept {
    runtime tmp(std::move(o));
    std::swap(h_, tmp.h_);
    return *this;
  }
  ~runtime() {
    if (h_) memhc_runtime_destroy(h_.get());
  }
  /// Whether this owns a runtime (false once moved from or destroyed).
  explicit operator bool() const noexcept { return static_cast<bool>(h_); }
  /// The C handle (still owned by this runtime).
  memhc_runtime get() const noexcept { return h_.get(); }
  /// Destroys the runtime now; throws MEMHC_STATUS_INVALID_HANDLE when it owns none.
  void destroy() { detail::check(memhc_runtime_destroy(h_.take())); }

  /// Registers a node of `spins` components, each a row-major tensor of dimensions `dims`
  /// (1 to 8 of them, none 0), from `data` (packed: component after component); data is
  /// copied before the call returns. Throws MEMHC_STATUS_SIZE_MISMATCH when data.size() is
  /// not spins * dims[0] * ..., MEMHC_STATUS_INVALID_ARGUMENT for a bad shape.
  node register_node(std::size_t spins, span<const std::size_t> dims, span<const complex> data) {
    memhc_object o{0};
    detail::check(memhc_register(h_.get(), spins, dims.data(), dims.size(),
                                 detail::c_ptr(data.data()), data.size(), &o));
    return node(h_.get(), o);
  }
  /// The same with the dimensions as a list: rt.register_node(16, {N, N}, data).
  node register_node(std::size_t spins, std::initializer_list<std::size_t> dims,
                     span<const complex> data) {
    return register_node(spins, span<const std::size_t>(dims.begin(), dims.size()), data);
  }

  /// The plan of the 4x4 spin-block product of two full-spin mesons (16 outputs, 64 terms).
  plan meson4x4() {
    memhc_plan p{0};
    detail::check(memhc_plan_meson4x4(h_.get(), &p));
    return plan(h_.get(), p);
  }
  /// A plan from a list of terms (accumulated in order) with `out_spins` outputs (0: the
  /// largest out plus one). Throws MEMHC_STATUS_INVALID_ARGUMENT: no terms, an output out of
  /// range, a term listed twice.
  plan make_plan(span<const term> terms, std::size_t out_spins = 0) {
    memhc_plan p{0};
    detail::check(memhc_plan_create(h_.get(), out_spins, terms.data(), terms.size(), &p));
    return plan(h_.get(), p);
  }
  /// The same with the terms as a list: rt.make_plan({{0, 0, 5}, {3, 15, 15}}, 4).
  plan make_plan(std::initializer_list<term> terms, std::size_t out_spins = 0) {
    return make_plan(span<const term>(terms.begin(), terms.size()), out_spins);
  }

  /// Contracts `a` with `b` by `p` on `stream` into a new node that stays on the device until
  /// read. Throws MEMHC_STATUS_INVALID_HANDLE (a node or plan released, empty or of another
  /// runtime), MEMHC_STATUS_INVALID_ARGUMENT (shapes that do not multiply, a spin out of
  /// range, a stream not below the runtime's streams), MEMHC_STATUS_DOES_NOT_FIT (the
  /// operands and result do not fit in the budget), MEMHC_STATUS_DEVICE.
  node contract(const node& a, const node& b, const plan& p, std::size_t stream = 0,
                std::size_t a_split = 0, std::size_t b_split = 0) {
    const memhc_contraction c{a.get(), b.get(), p.get(), a_split, b_split};
    memhc_object o{0};
    detail::check(memhc_contract(h_.get(), &c, stream, &o));
    return node(h_.get(), o);
  }
  /// Runs independent contractions concurrently (contraction i on stream i mod streams) and
  /// returns their new nodes in order. Throws as contract().
  std::vector<node> run_vector(span<const contraction> vector) {
    std::vector<memhc_contraction> cs;
    cs.reserve(vector.size());
    for (const contraction& c : vector) cs.push_back(c.c);
    std::vector<memhc_object> outs(cs.size(), memhc_object{0});
    detail::check(memhc_run_vector(h_.get(), cs.data(), cs.size(), outs.data(), outs.size()));
    std::vector<node> nodes;
    nodes.reserve(outs.size());
    for (memhc_object o : outs) nodes.emplace_back(h_.get(), o);
    return nodes;
  }
  /// The same with the contractions as a list.
  std::vector<node> run_vector(std::initializer_list<contraction> vector) {
    return run_vector(span<const contraction>(vector.begin(), vector.size()));
  }

  /// sum over (a, b) in pairs of Tr(A[a] * B[b]), over spin and distillation indices; waits
  /// for the result. Throws MEMHC_STATUS_INVALID_ARGUMENT (no pairs, a pair twice, a spin out
  /// of range, shapes that do not close), MEMHC_STATUS_INVALID_HANDLE.
  complex trace(const node& a, const node& b, span<const pair> pairs, std::size_t stream = 0) {
    memhc_complex t{0, 0};
    detail::check(memhc_trace(h_.get(), a.get(), b.get(), pairs.data(), pairs.size(), stream, &t));
    return complex(t.re, t.im);
  }
  /// The same with the pairs as a list: rt.trace(a, b, {{0, 0}, {5, 5}}).
  complex trace(const node& a, const node& b, std::initializer_list<pair> pairs,
                std::size_t stream = 0) {
    return trace(a, b, span<const pair>(pairs.begin(), pairs.size()), stream);
  }
  /// The full spin trace of two mesons: Tr(A * B) over spin and distillation indices.
  complex trace_meson4x4(const node& a, const node& b, std::size_t stream = 0) {
    memhc_complex t{0, 0};
    detail::check(memhc_trace_meson4x4(h_.get(), a.get(), b.get(), stream, &t));
    return complex(t.re, t.im);
  }

  /// The node's shape. Throws MEMHC_STATUS_INVALID_HANDLE.
  memhc::shape shape(const node& n) const {
    std::size_t spins = 0, rank = 0;
    std::array<std::size_t, 8> dims{};
    memhc_status s = memhc_object_shape(h_.get(), n.get(), &spins, dims.data(), dims.size(), &rank);
    if (s == MEMHC_STATUS_BUFFER_TOO_SMALL) {
      std::vector<std::size_t> big(rank);
      detail::check(memhc_object_shape(h_.get(), n.get(), &spins, big.data(), big.size(), &rank));
      return memhc::shape{spins, std::move(big)};
    }
    detail::check(s);
    return memhc::shape{spins, std::vector<std::size_t>(dims.begin(), dims.begin() + rank)};
  }
  /// The node's number of complex elements (what read() needs). Throws
  /// MEMHC_STATUS_INVALID_HANDLE.
  std::size_t elements(const node& n) const {
    std::size_t e = 0;
    detail::check(memhc_object_elements(h_.get(), n.get(), &e));
    return e;
  }
  /// Copies the node's values (packed order) into `out`, whose size must be elements(n)
  /// (else MEMHC_STATUS_SIZE_MISMATCH and nothing is written); waits for the work that
  /// writes it. Throws MEMHC_STATUS_INVALID_HANDLE, MEMHC_STATUS_UNINITIALIZED.
  void read(const node& n, span<complex> out) {
    detail::check(memhc_read(h_.get(), n.get(), detail::c_ptr(out.data()), out.size()));
  }
  /// The node's values in a new vector (packed order).
  std::vector<complex> read(const node& n) {
    std::vector<complex> v(elements(n));
    read(n, span<complex>(v.data(), v.size()));
    return v;
  }

  /// A snapshot of the statistics.
  memhc::stats stats() const {
    memhc_stats s{};
    detail::check(memhc_get_stats(h_.get(), &s));
    return s;
  }
  /// Checks every invariant of the runtime's tables; throws MEMHC_STATUS_AUDIT_FAILED (a bug
  /// in memhc) naming every broken one.
  void audit() const { detail::check(memhc_audit(h_.get())); }
  /// Waits for all work on all streams (reads already wait for what they need).
  void synchronize() { detail::check(memhc_synchronize(h_.get())); }

 private:
  detail::handle<memhc_runtime> h_;
};

/// Planning options of a correlator file (memhc_corr_options).
struct corr_options {
  /// Share identical partial products and traces across loops, graphs and time pairs.
  bool sharing = true;
  /// Run in the file's order instead of the planner's memory-aware one.
  bool file_order = false;
  /// At most this many contractions per vector (stage); 0: 16.
  std::size_t vector_size = 0;
  /// The C options.
  memhc_corr_options c_options() const noexcept {
    memhc_corr_options o = memhc_corr_options_default();
    o.sharing = sharing ? 1 : 0;
    o.file_order = file_order ? 1 : 0;
    o.vector_size = vector_size;
    return o;
  }
};

/// The correlators of one run or of the reference (memhc_corr_results), in the file's order.
/// Immutable; released on destruction.
class corr_results {
 public:
  /// An empty result (owns nothing).
  corr_results() noexcept = default;
  /// Takes ownership of `r`.
  explicit corr_results(memhc_corr_results r) noexcept : h_(r) {}
  corr_results(corr_results&&) noexcept = default;
  corr_results& operator=(corr_results&& o) noexcept {
    corr_results tmp(std::move(o));
    std::swap(h_, tmp.h_);
    return *this;
  }
  ~corr_results() {
    if (h_) memhc_corr_results_release(h_.get());
  }
  /// Whether this owns a handle.
  explicit operator bool() const noexcept { return static_cast<bool>(h_); }
  /// The C handle (still owned by this object).
  memhc_corr_results get() const noexcept { return h_.get(); }
  /// Releases the results now; throws MEMHC_STATUS_INVALID_HANDLE when empty.
  void release() { detail::check(memhc_corr_results_release(h_.take())); }

  /// The number of correlators (indices 0 .. size() - 1).
  std::size_t size() const {
    std::size_t n = 0;
    detail::check(memhc_corr_results_count(h_.get(), &n));
    return n;
  }
  /// The name of correlator `i`; throws MEMHC_STATUS_INVALID_ARGUMENT for i >= size().
  std::string name(std::size_t i) const {
    std::size_t needed = 0;
    memhc_status s = memhc_corr_results_name(h_.get(), i, nullptr, 0, &needed);
    if (s != MEMHC_STATUS_BUFFER_TOO_SMALL) detail::check(s);
    std::vector<char> buf(needed > 0 ? needed : 1);
    detail::check(memhc_corr_results_name(h_.get(), i, buf.data(), buf.size(), &needed));
    return std::string(buf.data());
  }
  /// The number of time pairs of correlator `i`.
  std::size_t len(std::size_t i) const {
    std::size_t n = 0;
    detail::check(memhc_corr_results_len(h_.get(), i, &n));
    return n;
  }
  /// Copies correlator `i` into the caller's views, whose sizes must both be len(i) (else
  /// MEMHC_STATUS_SIZE_MISMATCH and nothing is written); values[k] is the value at times[k].
  void values(std::size_t i, span<corr_time> times, span<complex> values) const {
    if (times.size() != values.size())
      throw error(MEMHC_STATUS_SIZE_MISMATCH,
                  "corr_results::values: times has " + std::to_string(times.size()) +
                      " elements, values " + std::to_string(values.size()));
    detail::check(memhc_corr_results_values(h_.get(), i, times.data(),
                                            detail::c_ptr(values.data()), values.size()));
  }
  /// The time pairs of correlator `i`.
  std::vector<corr_time> times(std::size_t i) const {
    std::vector<corr_time> t(len(i));
    detail::check(memhc_corr_results_values(h_.get(), i, t.data(), nullptr, t.size()));
    return t;
  }
  /// The values of correlator `i` (values(i)[k] is at times(i)[k]).
  std::vector<complex> values(std::size_t i) const {
    std::vector<complex> v(len(i));
    detail::check(
        memhc_corr_results_values(h_.get(), i, nullptr, detail::c_ptr(v.data()), v.size()));
    return v;
  }
  /// The index of the correlator called `name`; throws MEMHC_STATUS_NOT_FOUND (the message
  /// lists the names there are).
  std::size_t find(const std::string& name) const {
    std::size_t i = 0;
    detail::check(memhc_corr_results_find(h_.get(), name.c_str(), &i));
    return i;
  }
  /// The largest relative difference of these values from `other`'s (infinity when the two
  /// do not have the same correlators and time pairs).
  double compare(const corr_results& other) const {
    double e = 0;
    detail::check(memhc_corr_results_compare(h_.get(), other.get(), &e));
    return e;
  }
  /// Writes the correlators to `path`: ".json", ".csv" (".h5" in an hdf5 build, else
  /// MEMHC_STATUS_UNAVAILABLE). Throws MEMHC_STATUS_INVALID_ARGUMENT for another extension,
  /// MEMHC_STATUS_IO when the file cannot be written.
  void write(const std::string& path) const {
    detail::check(memhc_corr_results_write(h_.get(), path.c_str()));
  }

 private:
  detail::handle<memhc_corr_results> h_;
};

/// A correlator file (memhc-corr/1, docs/correlator-format.md), loaded with its node data and
/// planned (memhc_corr). Immutable; holds no runtime (each run makes its own). Released on
/// destruction.
class corr {
 public:
  /// An empty file (owns nothing).
  corr() noexcept = default;
  /// Loads and plans the file at `path`. Throws MEMHC_STATUS_IO (cannot be read),
  /// MEMHC_STATUS_INVALID_FILE (not valid: one line naming the file and the place).
  explicit corr(const std::string& path, const corr_options& options = corr_options{}) {
    const memhc_corr_options o = options.c_options();
    memhc_corr c{0};
    detail::check(memhc_corr_open(path.c_str(), &o, &c));
    h_ = detail::handle<memhc_corr>(c);
  }
  corr(corr&&) noexcept = default;
  corr& operator=(corr&& o) noexcept {
    corr tmp(std::move(o));
    std::swap(h_, tmp.h_);
    return *this;
  }
  ~corr() {
    if (h_) memhc_corr_release(h_.get());
  }
  /// Whether this owns a handle.
  explicit operator bool() const noexcept { return static_cast<bool>(h_); }
  /// The C handle (still owned by this object).
  memhc_corr get() const noexcept { return h_.get(); }
  /// Releases the file now (results made from it stay valid); throws
  /// MEMHC_STATUS_INVALID_HANDLE when empty.
  void release() { detail::check(memhc_corr_release(h_.take())); }

  /// The planner's report: contractions with and without sharing, flops, peak bytes, ...
  plan_report report() const {
    plan_report r{};
    detail::check(memhc_corr_plan(h_.get(), &r));
    return r;
  }
  /// Runs the file on the host backend with the plan's peak as budget (nothing is evicted).
  corr_results run() const {
    memhc_corr_results r{0};
    detail::check(memhc_corr_run(h_.get(), nullptr, &r));
    return corr_results(r);
  }
  /// Runs the file on a fresh runtime configured by `cfg` (budget 0: the plan's peak on the
  /// host backend, the device's free memory on a GPU). Throws as runtime's constructor, and
  /// MEMHC_STATUS_DOES_NOT_FIT, MEMHC_STATUS_DEVICE.
  corr_results run(const config& cfg) const {
    const memhc_config c = cfg.c_config();
    memhc_corr_results r{0};
    detail::check(memhc_corr_run(h_.get(), &c, &r));
    return corr_results(r);
  }
  /// The correlators by memhc's independent dense reference (slow; for checking).
  corr_results reference() const {
    memhc_corr_results r{0};
    detail::check(memhc_corr_reference(h_.get(), &r));
    return corr_results(r);
  }
  /// Checks `results` against the reference and returns the largest relative error; throws
  /// MEMHC_STATUS_VERIFY_FAILED above 1e-12.
  double verify(const corr_results& results) const {
    double e = 0;
    detail::check(memhc_corr_verify(h_.get(), results.get(), &e));
    return e;
  }

 private:
  detail::handle<memhc_corr> h_;
};

}  // namespace memhc

#undef MEMHC_HPP_STD_SPAN
#endif  // MEMHC_HPP
