package storage

// MaxPrepared is maxPrepared, for the tests of the prepared statements.
const MaxPrepared = maxPrepared
