//! Engine micro-benchmarks (placeholder until written).
fn main() {}
