//! The `evalsim` binary: everything lives in the library; see [`evalsim::cli`].
fn main() -> std::process::ExitCode {
    evalsim::cli::main()
}
