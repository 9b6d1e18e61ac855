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
    let done = AtomicBool::new(false);
    /// Sets `done` however `f` ends, so that no waiter is left spinning.
    struct Done<'a>(&'a AtomicBool);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    rayon::in_place_scope(|scope| {
        let done = &done;
        // A waiter on every worker. This one's runs when it next looks for
        // work (in a join within `f`, or at the end of the scope) and must
        // not wait there: `f` could not go on until it returned.
        scope.spawn_broadcast(move |_, context| {
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
        let _done = Done(done);
        f()
    })
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
}
