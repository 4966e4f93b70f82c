package ratelimit

import "strings"

// slots is the number of hash slots of a Redis Cluster.
const slots = 16384

// slot returns the Redis Cluster hash slot of a key: CRC16 (XMODEM) of its hash tag, the
// part between the first "{" and the next "}" when that part is not empty, else of the key.
func slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % slots
}
