fn main() {
    println!("pith: under construction");
}
