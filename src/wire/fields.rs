//! OMMX's field numbers, the one table every reader and writer of a field
//! by its number names it from.
