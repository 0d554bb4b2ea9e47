//! Shared fixtures for the integration tests. Each test file includes this module with
//! `mod common;` and uses only part of it.

#[allow(dead_code)]
pub mod novel;

#[allow(dead_code)]
pub mod rng;

#[allow(dead_code)]
pub mod page;

#[allow(dead_code)]
pub mod session;

#[allow(dead_code)]
pub mod worker;
