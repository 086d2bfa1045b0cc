"""Service functions: the only place that combines storage, queue, referee and ratings."""
