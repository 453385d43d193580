// A second thread for a fused update's independent halves (the twin critics of TD3 and SAC): one std::thread per
// update object, made only when the caller asks for two threads. After a job it spins for a while (updates come
// every ~0.1 ms while training, and waking a parked thread costs more than a critic's half) and then parks on a
// condition variable, so an idle process keeps no core busy. Both halves call OpenBLAS's cblas_sgemm at once, which
// OpenBLAS's threaded build allows.
#ifndef DING4J_HELPER_H
#define DING4J_HELPER_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ding4j {

class Helper {
public:
    Helper() : thread_([this] { loop(); }) {}

    Helper(const Helper&) = delete;
    Helper& operator=(const Helper&) = delete;

    ~Helper() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }

    /** Runs f(1) on the helper and f(0) here, and returns when both are done. */
    template <typename F>
    void both(F& f) {
        job_ = &Helper::call<F>;
        arg_ = &f;
        const uint64_t n = posted_.load(std::memory_order_relaxed) + 1;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            posted_.store(n, std::memory_order_release);
        }
        wake_.notify_one();
        f(0);
        while (finished_.load(std::memory_order_acquire) != n) {
            pause();
        }
    }

private:
    template <typename F>
    static void call(void* f) {
        (*static_cast<F*>(f))(1);
    }

    static void pause() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }

    void loop() {
        uint64_t seen = 0;
        while (true) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(SPIN_US);
            int polls = 0;
            while (posted_.load(std::memory_order_acquire) == seen) {
                if (0 != (++polls & 255) || std::chrono::steady_clock::now() < until) {
                    pause();
                    continue;
                }
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || posted_.load(std::memory_order_acquire) != seen; });
                if (stop_) {
                    return;
                }
            }
            seen = posted_.load(std::memory_order_acquire);
            job_(arg_);
            finished_.store(seen, std::memory_order_release);
        }
    }

    // How long the helper spins for the next job before it parks.
    static constexpr int SPIN_US = 500;
    std::atomic<uint64_t> posted_{0};
    std::atomic<uint64_t> finished_{0};
    void (*job_)(void*) = nullptr;
    void* arg_ = nullptr;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
};

/** f(0) and f(1): on two threads when helper is not null, else one after the other here. */
template <typename F>
inline void both(Helper* helper, F&& f) {
    if (nullptr != helper) {
        helper->both(f);
    } else {
        f(0);
        f(1);
    }
}

/** Makes the helper when threads is 2 (if there is none yet), ends it otherwise. */
inline void set_threads(Helper*& helper, const int threads) {
    if (2 == threads && nullptr == helper) {
        helper = new Helper();
    } else if (2 != threads && nullptr != helper) {
        delete helper;
        helper = nullptr;
    }
}

}  // namespace ding4j

#endif  // DING4J_HELPER_H
