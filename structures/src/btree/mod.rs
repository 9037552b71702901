//! B+tree (in progress).
