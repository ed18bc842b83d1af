//! Benchmark suites held against published results, as plain data: what a suite file says
//! ([`suite`]: its rows, each with the published figure it is held against, and the file's
//! JSON Schema) and the report made of a suite's runs ([`report`]: the table, and per row the
//! learning curves as SVG, in one HTML file). Running a suite's rows is `rlgraph bench`'s;
//! this crate trains nothing.

pub mod report;
pub mod suite;
