// Package workload is what a run sends and when: the Plan of a run (the
// scenario file with the command line's flags laid over it, checked once),
// the mix of calls and how a tick picks its call, the exact open-loop
// schedule and the closed-loop stages, the split of a load over shards,
// the expectations replies are checked against, and the dry run. Scenario
// files are read by the scenario sub-package, params templates, generators
// and feeders live in gen. The engine only runs a Plan.
package workload
