//! x86-64 kernels, compiled for their instruction set and entered only after
//! runtime detection.

/// Defines a packing module's `push_differences`: the packing loop of
/// [`crate::engine::PackedChanges`] compiled with `$features` (the CPU
/// features it needs, named in `$needs` for its safety contract) around the
/// module's own `differing` and `pairs`.
macro_rules! push_differences_with {
    ($features:literal, $needs:literal) => {
        /// [`PackedChanges::push_differences`] with this module's kernels.
        ///
        /// # Safety
        ///
        #[doc = concat!("The CPU must support ", $needs, ".")]
        /// (Everything else is checked: the packing loop is safe code.)
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn push_differences(
            changes: &mut PackedChanges,
            first_state: usize,
            old: &[i8],
            new: &[i8],
        ) {
            // Closures, which take on this function's target features:
            // calling the kernels from them is safe and inlines.
            changes.push_blocks(
                first_state,
                old,
                new,
                |old, new| differing(old, new),
                |differ, new, out| pairs(differ, new, out),
            );
        }
    };
}

pub(super) mod avx2;
pub(super) mod avx2_pack;
pub(super) mod avx512;
