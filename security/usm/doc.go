// Package usm implements the SNMPv3 User-based Security Model (RFC 3414)
// for tsnmp, including the HMAC-SHA-2 authentication protocols of RFC 7860,
// AES-128 privacy (RFC 3826) and the AES-192/AES-256 key-extension variants
// interoperable with Net-SNMP (the "Blumenthal" extension used by
// usmAES192PrivProtocol/usmAES256PrivProtocol and the "Reeder" extension used
// by the Cisco OIDs).
//
// The package is layered:
//
//   - AuthProtocol and PrivProtocol describe the algorithms, keyed by OID and
//     by the names Net-SNMP accepts on its command line (-a / -x).
//   - PasswordToKey, LocalizeKey and LocalizePrivKey implement the key
//     derivation of RFC 3414 section 2.6 and appendix A.2, and the key
//     extension needed for ciphers with longer keys than the hash output.
//   - KeyCache memoises the expensive password-to-key step without ever
//     storing plaintext passwords.
//   - User holds a user's protocols and master keys and lazily derives the
//     localized keys for each authoritative engine.
//
// All errors returned by this package carry a "usm:" prefix.
package usm
