package usm

import "errors"

// Sentinel errors for configuration and key handling.
var (
	// ErrPasswordTooShort is returned when a password has fewer than
	// MinPasswordLen octets (the limit Net-SNMP enforces).
	ErrPasswordTooShort = errors.New("usm: password must be at least 8 octets")
	// ErrUnknownAuthProtocol is returned for an unrecognised authentication
	// protocol OID or name.
	ErrUnknownAuthProtocol = errors.New("usm: unknown authentication protocol")
	// ErrUnknownPrivProtocol is returned for an unrecognised privacy
	// protocol OID or name.
	ErrUnknownPrivProtocol = errors.New("usm: unknown privacy protocol")
	// ErrPrivWithoutAuth is returned when privacy is configured without
	// authentication, which RFC 3414 does not allow.
	ErrPrivWithoutAuth = errors.New("usm: privacy requires an authentication protocol")
	// ErrKeyLength is returned when a key has the wrong length for its
	// protocol.
	ErrKeyLength = errors.New("usm: key has wrong length for protocol")
	// ErrEmptyEngineID is returned when a key is localized to an empty
	// engine ID.
	ErrEmptyEngineID = errors.New("usm: engine ID must not be empty")
	// ErrCiphertext is returned when a ciphertext or its privacy parameters
	// are malformed (RFC 3414 8.3.2 / RFC 3826 3.1.4 decryption errors).
	ErrCiphertext = errors.New("usm: malformed ciphertext or privacy parameters")
)
