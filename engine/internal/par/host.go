package par

// HostShare is the thread count of one process among localRanks that share
// a host of cpus cores: cpus / localRanks, at least 1 (localRanks <= 1: cpus).
func HostShare(cpus, localRanks int) int {
	if localRanks <= 1 {
		return max(cpus, 1)
	}
	return max(cpus/localRanks, 1)
}
