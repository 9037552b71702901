//! Random queries against the reference evaluator (being written).
