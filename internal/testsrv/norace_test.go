//go:build !race

package testsrv

const raceEnabled = false
