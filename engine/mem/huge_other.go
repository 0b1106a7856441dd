//go:build !linux

package mem

func adviseHuge([]byte) {}
