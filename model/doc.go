// Package model holds the records Parley keeps: the rows the storage
// repositories read and write, and the errors they return. The structs carry
// bun's column tags but import no database package, so that the services,
// and the API through them, hold records without linking a driver. A table's
// name is the plural of its type's name (bun's default), which the storage
// tests check against every table.
package model
