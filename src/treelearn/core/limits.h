// Limits of the exponential searches: time, memory, stop requests, worker threads.
//
// * Clock: the deadline (time_limit seconds from a start shared by every thread) and the stop
//   flag every thread of one search polls; timed_out() reads the clock every 64th call only;
// * MemoryMeter: the cap of a searcher's memory (cache and work space), its fixed part and the
//   peak seen;
// * interrupts: SigintScope installs a SIGINT (Ctrl-C) handler while any fit runs, in any thread
//   (the previous one restored after the last, and called by ours, so Python still raises
//   KeyboardInterrupt); it sets a process-wide flag that every search polls with its clock
//   (interrupted()), and the greedy growth per node;
// * DeadlineWatch: a thread that raises the stop flag at the deadline or on Ctrl-C, for searches
//   whose single calls can be slow (a node over 100,000s of features): the Clock reads the time
//   only every stride-th call, and 64 calls of 25 ms each overran a deadline by 1.6 s; the flag
//   itself is checked on every call;
// * run_workers(T, body): body(t) for t = 0..T-1, each on its own thread. A thread that cannot be
//   started runs its share in the calling thread after the others (same results, fewer
//   threads); an exception thrown by a body (std::bad_alloc in a worker, ...) never escapes its
//   thread: the first one is re-thrown in the caller after every thread has been joined.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#if defined(__unix__) || defined(__APPLE__)
#include <signal.h>
#endif

namespace tl {

using steady = std::chrono::steady_clock;

// ------------------------------------------------------------------ Ctrl-C
using SignalHandler = void (*)(int);

// One state per process, whichever extension module includes this header: the flag every
// search polls, the count of open scopes and the handler before ours. Each extension module has
// its own copy of this header's statics, so the module that owns the state
// (treelearn._criteria) hands its address to the others when they are imported
// (use_shared_sigint); until then a module uses its own.
inline void on_sigint(int sig);

// `ours` is the handler of the module that owns the state: every module's scopes install and
// recognise that one function (each module has its own copy of on_sigint, and a scope that took
// another module's copy for a stranger's handler chained to it instead of to Python's).
struct SigintShared {
    explicit SigintShared(SignalHandler h) : ours(h) {}
    SignalHandler ours;
    std::atomic<int> flag{0};
    std::mutex mu;
    int open = 0;
    bool installed = false;
    SignalHandler saved = SIG_DFL;
};
inline SigintShared& sigint_own() {
    static SigintShared st(on_sigint);
    return st;
}
inline SigintShared*& sigint_shared_ptr() {
    static SigintShared* p = nullptr;
    return p;
}
inline SigintShared& sigint_shared() {
    SigintShared* p = sigint_shared_ptr();
    return p ? *p : sigint_own();
}
inline void* own_shared_sigint() { return &sigint_own(); }
inline void use_shared_sigint(void* p) {
    if (p) sigint_shared_ptr() = static_cast<SigintShared*>(p);
}

inline std::atomic<int>& interrupt_flag() { return sigint_shared().flag; }
inline bool interrupted() { return interrupt_flag().load(std::memory_order_relaxed) != 0; }

inline void on_sigint(int sig) {
    SigintShared& st = sigint_shared();
    st.flag.store(1);
    SignalHandler prev = st.saved;
    if (prev != SIG_DFL && prev != SIG_IGN && prev != SIG_ERR && prev != st.ours && prev != on_sigint) prev(sig);
}

// The handler SIGINT has now, without changing it (POSIX: sigaction; elsewhere the swap of
// std::signal, which is all that platform has).
inline SignalHandler current_sigint_handler() {
#if defined(__unix__) || defined(__APPLE__)
    struct sigaction now;
    if (sigaction(SIGINT, nullptr, &now) != 0 || (now.sa_flags & SA_SIGINFO)) return SIG_ERR;
    return now.sa_handler;
#else
    SignalHandler prev = std::signal(SIGINT, SIG_DFL);
    if (prev != SIG_ERR) std::signal(SIGINT, prev);
    return prev;
#endif
}

// SIGINT handled by on_sigint while at least one scope lives, in any thread: the first scope
// to open clears the flag and installs the handler, the last to close restores the previous one
// (a count under a lock), so that a search running in a worker thread stops on Ctrl-C as one in
// the main thread does (the kernel may deliver the signal to any thread; the handler only sets
// the flag and chains to the previous handler, Python's, which wakes the main thread). A fit
// holds one scope from start to end (treelearn._criteria.SigintHold), so that a Ctrl-C between
// two compiled calls is seen by the next. An ignored SIGINT stays ignored.
//
// Code that sets its own SIGINT handler while a fit runs (signal.signal in another thread, a
// notebook kernel) must not leave later fits deaf: every scope that opens checks that on_sigint
// is still the handler and, if another one replaced it, installs on_sigint again in front of it
// (the replacement becomes the handler chained to and restored). The last scope to close
// restores the previous handler only if on_sigint is still installed: a handler set meanwhile
// stays.
class SigintScope {
  public:
    SigintScope() {
        SigintShared& st = sigint_shared();
        std::lock_guard<std::mutex> lock(st.mu);
        bool first = st.open++ == 0;
        if (first) st.flag.store(0);
        SignalHandler now = current_sigint_handler();
        if (now == SIG_IGN || now == SIG_ERR) return;
        if (now == st.ours) {  // ours already (a scope open, or left by a module's own state)
            if (first) st.installed = true;
            return;
        }
        SignalHandler prev = std::signal(SIGINT, st.ours);
        if (prev == SIG_ERR) return;
        if (prev == SIG_IGN) {  // ignored in between: stays ignored
            std::signal(SIGINT, SIG_IGN);
            return;
        }
        if (prev != st.ours) st.saved = prev;
        st.installed = true;
    }
    ~SigintScope() {
        SigintShared& st = sigint_shared();
        std::lock_guard<std::mutex> lock(st.mu);
        if (--st.open > 0) return;
        if (st.installed && current_sigint_handler() == st.ours) std::signal(SIGINT, st.saved);
        st.installed = false;
    }
    SigintScope(const SigintScope&) = delete;
    SigintScope& operator=(const SigintScope&) = delete;
};


// for bindings that cannot hold a C++ object on their stack
inline SigintScope* open_sigint_scope() { return new SigintScope(); }
inline void close_sigint_scope(SigintScope* s) { delete s; }

struct Clock {
    steady::time_point t0;
    double time_limit;          // seconds, <= 0: none
    std::atomic<bool>* stop;    // shared by the threads of one search
    unsigned tick = 0;
    unsigned stride = 1;        // calls between two reads of the clock (1..64, adaptive)
    double last = 0.0;          // elapsed() at the last read
    unsigned reads = 0;         // reads of the clock so far (live counters publish on a new one)

    Clock(steady::time_point start, double limit, std::atomic<bool>* flag) : t0(start), time_limit(limit), stop(flag) {}

    double elapsed() const { return std::chrono::duration<double>(steady::now() - t0).count(); }
    bool stopped() const { return stop->load(std::memory_order_relaxed); }
    void request_stop() { stop->store(true); }
    // true once the search must stop (the flag; the deadline and Ctrl-C). The clock is read
    // every stride-th call, the stride adapting so that reads are about 1 ms apart: up to 64
    // calls when calls are cheap (the read costs nothing), down to every call when each call
    // stands for a lot of work (a node over 100,000 features: 64 of them took seconds)
    bool timed_out() {
        if (stop->load(std::memory_order_relaxed)) return true;
        if (++tick < stride) return false;
        tick = 0;
        ++reads;
        const double now = elapsed();
        const double gap = now - last;
        last = now;
        if (gap > 2e-3 && stride > 1) stride >>= 1;
        else if (gap < 5e-4 && stride < 64) stride <<= 1;
        if (interrupted() || (time_limit > 0 && now >= time_limit)) {
            stop->store(true);
            return true;
        }
        return false;
    }
};

// Raises *stop at t0 + time_limit (time_limit > 0) or when Ctrl-C is seen (polled every 20 ms),
// from a thread of its own, for as long as it lives (the destructor wakes and joins it). When
// `active` is false, or no thread can be started, it does nothing: the clocks' own reads still
// stop the search, only less promptly.
class DeadlineWatch {
  public:
    DeadlineWatch(steady::time_point t0, double time_limit, std::atomic<bool>* stop, bool active) {
        if (!active) return;
        try {
            th = std::thread([this, t0, time_limit, stop]() { watch(t0, time_limit, stop); });
        } catch (...) {  // std::system_error (no thread), std::bad_alloc
        }
    }
    ~DeadlineWatch() {
        {
            std::lock_guard<std::mutex> lock(mu);
            done = true;
        }
        cv.notify_all();
        if (th.joinable()) th.join();
    }
    DeadlineWatch(const DeadlineWatch&) = delete;
    DeadlineWatch& operator=(const DeadlineWatch&) = delete;

  private:
    std::thread th;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;

    void watch(steady::time_point t0, double time_limit, std::atomic<bool>* stop) noexcept {
        const auto deadline = t0 + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(
                                       time_limit > 0 ? time_limit : 1e9));
        std::unique_lock<std::mutex> lock(mu);
        while (!done) {
            const auto next = std::min(deadline, steady::now() + std::chrono::milliseconds(20));
            cv.wait_until(lock, next);
            if (done) return;
            if (interrupted() || (time_limit > 0 && steady::now() >= deadline)) {
                stop->store(true);
                return;
            }
        }
    }
};

struct MemoryMeter {
    double cap;             // bytes
    double fixed = 0.0;     // work space held for the whole search
    double peak = 0.0;
    explicit MemoryMeter(double cap_bytes) : cap(cap_bytes) {}
    void note(double variable_bytes) {
        const double now = fixed + variable_bytes;
        if (now > peak) peak = now;
    }
};

// body(t) for t = 0..T-1 on T threads (see the header comment)
template <typename Body>
void run_workers(int T, Body&& body) {
    if (T <= 1) {  // one share: the calling thread (a thread start and join per call costs more
        body(0);   // than small bodies, and a loaded machine makes the caller wait for its slot)
        return;
    }
    std::exception_ptr first;
    std::mutex mu;
    auto guarded = [&](int t) {
        try {
            body(t);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!first) first = std::current_exception();
        }
    };
    std::vector<std::thread> th;
    std::vector<int> inline_ts;
    th.reserve(T);
    for (int t = 0; t < T; ++t) {
        try {
            th.emplace_back(guarded, t);
        } catch (...) {  // std::system_error (no thread), std::bad_alloc
            inline_ts.push_back(t);
        }
    }
    for (int t : inline_ts) guarded(t);
    for (auto& x : th) x.join();
    if (first) std::rethrow_exception(first);
}

}  // namespace tl
