//! quiredb-structures: see ../shared/DESIGN.md.
#![forbid(unsafe_code)]
