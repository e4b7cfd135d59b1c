// Package proccpu reads the CPU time the running process has used: the
// figure benchmarks divide by their replies or inputs (steadier than a
// rate on a shared machine), and capacity's check that the load generator
// itself was not the bottleneck.
package proccpu
