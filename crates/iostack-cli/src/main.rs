fn main() {
    std::process::exit(iostack_cli::run(std::env::args_os()));
}
