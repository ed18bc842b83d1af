//! Benchmark suites held against published results: what a suite file says ([`suite`]: its
//! rows, each with the published figure it is held against, and the file's JSON Schema), the
//! runner that trains every row on its seeds and resumes a suite run in pieces ([`runner`]),
//! and the report made of the runs ([`report`]: the table, and per row the learning curves as
//! SVG, in one HTML file). `rlgraph bench` only turns its flags into these.

pub mod report;
pub mod runner;
pub mod suite;
