package main

// partitionChildMain and runPartitionBench: see stream.go (later).
func partitionChildMain() {}

type partitionReport struct{}

func runPartitionBench(cache string, limit int64) (partitionReport, error) { return partitionReport{}, nil }
