fn main() {
    endbook_cli_placeholder();
}
fn endbook_cli_placeholder() {}
