fn main() {
    std::process::exit(wfx::run());
}
