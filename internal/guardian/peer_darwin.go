package guardian

import "golang.org/x/sys/unix"

// sockUID is the uid of the peer of the unix socket fd (LOCAL_PEERCRED,
// what getpeereid(3) reads).
func sockUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
