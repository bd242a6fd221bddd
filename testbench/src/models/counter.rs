//! Model of `hdl::blocks::counter::up_counter`.

/// An up-counter of `width` bits: reset to 0, load has priority over enable,
/// increments wrap.
pub struct CounterModel {
    width: u32,
    value: u64,
}

impl CounterModel {
    /// A counter at 0.
    pub fn new(width: u32) -> Self {
        CounterModel { width, value: 0 }
    }

    /// Current count.
    pub fn count(&self) -> u64 {
        self.value
    }

    /// Applies one clock edge.
    pub fn step(&mut self, en: bool, load: bool, load_value: u64) {
        let mask = if self.width == 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        };
        if load {
            self.value = load_value & mask;
        } else if en {
            self.value = self.value.wrapping_add(1) & mask;
        }
    }
}
