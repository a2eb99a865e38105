#pragma once
// How many complete input/output sets timing rotates through. Each timed call gets the next set, so
// a candidate cannot reuse results by pointer, and enough of them together exceed twice the L2 so
// that a set is never still cached from its last turn. Beyond that, more sets made evaluations
// agree: with 3 sets the wgmma attention forward's median was 0.8 % slower in 3 of 10 evaluations in
// one harness on an H200 (session 11), spreads of 0.98 / 0.98 / 0.53 %; with 8 sets 0.28 / 0.24 /
// 0.16 % (runs interleaved). Why is not established: the harness keeps its sets from one evaluation
// to the next, and only each evaluation's runner maps them anew (at new virtual addresses); between
// processes, where the sets themselves are new, more of them also average over where each buffer
// landed. But the sets of a backward attention task take 2.2 GB each, and several harnesses share a
// GPU in the service, so the sets are also held to an eighth of the GPU's memory — never below the
// floors the first two reasons need. A pure function, so the CPU tests check it.

#include <cstddef>

namespace ptxbench::gpu {

inline constexpr std::size_t k_wanted_input_sets = 8;      ///< the placement goal, memory allowing
inline constexpr std::size_t k_min_input_sets = 3;         ///< the floor, whatever the memory
inline constexpr std::size_t k_input_set_memory_share = 8; ///< the sets take at most 1/8 of the GPU

/// `set_bytes`: what one set holds on the GPU (inputs, candidate outputs, reference outputs);
/// `l2_flush_bytes`: the L2 flusher's buffer (twice the L2); `device_bytes`: the GPU's memory;
/// `requested` > 0: the user's --input-sets, taken as given.
std::size_t rotating_input_sets(std::size_t set_bytes, std::size_t l2_flush_bytes, std::size_t device_bytes,
                                int requested);

}  // namespace ptxbench::gpu
