fn main() {
    let t = std::time::Instant::now();
    let l = sim::vector_loops();
    println!("{l} in {:?}", t.elapsed());
}
