//! Keeping the pool's other workers awake through a solve's many short
//! parallel steps.
//!
//! A turn of a mid-sized level is a handful of parallel steps of a few
//! hundred microseconds each (sweep, transpose, compare), with short serial
//! stretches between them. An idle rayon worker yields a few dozen times and
//! then sleeps; the next step must wake it, and on a virtual machine whose
//! idle vCPUs halt, that wake-up alone takes tens of microseconds
//! (measured on the project's machine: a `join` of two empty closures takes
//! 5 us while the other worker is awake, 21-23 us after 20-100 us of
//! idleness and 86 us after 1 ms). [`keep_awake`] keeps the other workers
//! looking for work, busy-waiting, for as long as its closure runs.

use rayon::Yield;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs `f` on this thread while every other worker of the current pool
/// busy-waits for work (taking what `f`'s parallel steps leave them)
/// instead of going to sleep; they return to rayon's own idling when `f`
/// returns. Outside a pool, or on a pool of one thread, just runs `f`.
///
/// A waiting worker gives its core to any other runnable thread between
/// two looks for work, so the cost is CPU time, not progress elsewhere.
pub fn keep_awake<R>(f: impl FnOnce() -> R) -> R {
    let leader = match rayon::current_thread_index() {
        Some(index) if rayon::current_num_threads() > 1 => index,
        _ => return f(),
    };
    let done = Arc::new(AtomicBool::new(false));
    /// Sets `done` however `f` ends, so that no waiter is left spinning.
    struct Done(Arc<AtomicBool>);
    impl Drop for Done {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let _done = Done(Arc::clone(&done));
    // A waiter on every worker, in no scope: nothing waits for them to
    // end, so a worker busy with other work when `f` ends (and that only
    // then finds its waiter, and drops it) holds nothing up. This worker's
    // own waiter runs when it next looks for work, in a join within `f` or
    // after it, and must not wait there: `f` could not go on.
    rayon::spawn_broadcast(move |context| {
        if context.index() == leader {
            return;
        }
        while !done.load(Ordering::Acquire) {
            if rayon::yield_now() != Some(Yield::Executed) {
                // Nothing to take: the core goes to any other runnable
                // thread (the book encoder's share it).
                std::thread::yield_now();
            }
        }
    });
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn runs_the_closure_and_its_parallel_steps() {
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let sums = pool.install(|| {
                keep_awake(|| {
                    (1..=200u64)
                        .map(|n| (0..n * 100).into_par_iter().sum::<u64>())
                        .collect::<Vec<_>>()
                })
            });
            for (n, sum) in (1..=200u64).zip(sums) {
                let m = n * 100;
                assert_eq!(sum, m * (m - 1) / 2, "{threads} threads, n = {n}");
            }
        }
        // Outside any pool.
        assert_eq!(keep_awake(|| 7), 7);
    }

    #[test]
    fn waiters_stop_when_the_closure_panics() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let result = pool.install(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                keep_awake(|| -> u32 { panic!("solver failed") })
            }))
        });
        assert!(result.is_err());
        // The pool is usable again: no worker is left waiting for `done`.
        assert_eq!(
            pool.install(|| (0..1000u32).into_par_iter().sum::<u32>()),
            499_500
        );
    }

    #[test]
    fn returns_while_another_worker_is_busy_elsewhere() {
        use std::sync::atomic::AtomicU8;
        use std::time::{Duration, Instant};
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        // 0: not started, 1: busy, 2: released, 3: gave up waiting.
        let state = Arc::new(AtomicU8::new(0));
        let value = pool.install(|| {
            let busy = Arc::clone(&state);
            // Occupies the other worker until released (or 10 s pass).
            rayon::spawn(move || {
                busy.store(1, Ordering::Release);
                let start = Instant::now();
                while busy.load(Ordering::Acquire) == 1 {
                    if start.elapsed() > Duration::from_secs(10) {
                        busy.store(3, Ordering::Release);
                    }
                    std::hint::spin_loop();
                }
            });
            while state.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            // Its waiter cannot start until the busy job ends: keep_awake
            // must not wait for it.
            let value = keep_awake(|| 7);
            let _ = state.compare_exchange(1, 2, Ordering::AcqRel, Ordering::Acquire);
            value
        });
        assert_eq!(value, 7);
        assert_eq!(
            state.load(Ordering::Acquire),
            2,
            "keep_awake waited for the busy worker"
        );
    }
}
