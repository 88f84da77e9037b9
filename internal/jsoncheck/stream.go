package jsoncheck

import "errors"

// Stream checks one JSON document given in parts, by the rules Valid
// applies to it whole: the same grammar, the same depth limit, the same
// answer whatever the cuts. It keeps no part: its memory is the open
// containers (at most MaxDepth bytes) and what Member asks it to keep of
// a top-level object's members. A relay that passes a long message on as
// it comes (the shim, issue 25) checks it here, so a long message is held
// to the rules a short one is (issue 30).
//
// Strings go through StringRest, as StringEnd reads them whole; numbers,
// literals and the bytes between values are read byte by byte.
type Stream struct {
	// Member, when set, is called at the end of each member of a
	// top-level object: its name as written (quotes and escapes
	// included; nil when longer than 64 bytes) and the start of its
	// value as written (at most 256 bytes; whole reports that it is all
	// of it, never for an array or an object).
	Member func(name, val []byte, whole bool)

	stack []byte // the open containers, '[' or '{'
	st    byte   // what comes next (the s* states)
	key   bool   // the string being read is a member name
	esc   int8   // a string's escape cut by a part: -1 its letter next, 1-4 \u hex digits to come
	lit   string // the rest of the literal being read
	first byte   // the document's first byte
	n     int64  // bytes before the current part
	err   error

	// The top-level member being read, for Member.
	inName, inVal bool
	name, val     []byte
	nameLong      bool
	valLong       bool
}

// What comes next.
const (
	sValue      byte = iota // a value (the document's, or after ':' or ',' in an array)
	sValueOrEnd             // after '[': a value or ']'
	sKey                    // after ',' in an object: a member name
	sKeyOrEnd               // after '{': a member name or '}'
	sColon                  // after a member name
	sNext                   // after a value: ',' or the closer; after the document, white space
	sString                 // inside a string
	sLit                    // inside true, false or null
	sNeg                    // a number: after its '-'
	sZero                   // after a leading 0
	sInt                    // in its integer digits
	sDot                    // after its '.'
	sFrac                   // in its fraction digits
	sE                      // after its 'e'
	sESign                  // after the exponent's sign
	sExp                    // in the exponent's digits
)

const (
	maxName = 64
	maxVal  = 256
)

// First returns the document's first byte other than white space (0
// before one came).
func (s *Stream) First() byte { return s.first }

// Write checks the next part of the document.
func (s *Stream) Write(p []byte) {
	for i := 0; i < len(p) && s.err == nil; {
		switch {
		case s.st == sString:
			i = s.inString(p, i)
		case s.st == sLit:
			for ; i < len(p) && s.lit != ""; i++ {
				if p[i] != s.lit[0] {
					s.fail(p, i, "invalid character in literal")
					return
				}
				s.keepVal(p[i : i+1])
				s.lit = s.lit[1:]
			}
			if s.lit == "" {
				s.st = sNext
			}
		case s.st >= sNeg:
			i = s.inNumber(p, i)
		default:
			c := p[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				i++
				continue
			}
			s.structural(p, i)
			i++
		}
	}
	s.n += int64(len(p))
}

// End reports whether the parts written make one JSON value: nil, or a
// *SyntaxError whose Offset counts from the document's first byte.
func (s *Stream) End() error {
	if s.err != nil {
		return s.err
	}
	switch s.st {
	case sZero, sInt, sFrac, sExp: // a number ends the document
		s.st = sNext
	}
	if s.st != sNext || len(s.stack) > 0 {
		return &SyntaxError{Offset: int(s.n), Msg: "unexpected end of JSON input"}
	}
	return nil
}

func (s *Stream) fail(p []byte, i int, msg string) {
	e := fail(p, i, msg).(*SyntaxError)
	e.Offset = int(s.n) + i
	s.err = e
}

// structural reads p[i], no white space, outside strings, numbers and
// literals.
func (s *Stream) structural(p []byte, i int) {
	c := p[i]
	if s.first == 0 {
		s.first = c
	}
	switch s.st {
	case sValueOrEnd:
		if c == ']' {
			s.close()
			return
		}
		fallthrough
	case sValue:
		s.value(p, i)
	case sKeyOrEnd:
		if c == '}' {
			s.close()
			return
		}
		fallthrough
	case sKey:
		if c != '"' {
			s.fail(p, i, "invalid character looking for beginning of object key string")
			return
		}
		s.st, s.key, s.esc = sString, true, 0
		if s.inName = len(s.stack) == 1; s.inName {
			s.name, s.nameLong = append(s.name[:0], c), false
		}
	case sColon:
		if c != ':' {
			s.fail(p, i, "invalid character after object key")
			return
		}
		s.st = sValue
		if s.inVal = len(s.stack) == 1; s.inVal {
			s.val, s.valLong = s.val[:0], false
		}
	case sNext:
		n := len(s.stack)
		switch {
		case n == 0:
			s.fail(p, i, "invalid character after top-level value")
		case c == ',':
			if s.topMember() {
				s.memberEnd()
			}
			s.st = sValue
			if s.stack[n-1] == '{' {
				s.st = sKey
			}
		case c == closer(s.stack[n-1]):
			if s.topMember() {
				s.memberEnd()
			}
			s.close()
		default:
			s.fail(p, i, "invalid character after "+kind(s.stack[n-1])+" element")
		}
	}
}

// value starts the value at p[i].
func (s *Stream) value(p []byte, i int) {
	c := p[i]
	switch c {
	case '[', '{':
		if len(s.stack) >= MaxDepth {
			s.err = &SyntaxError{Offset: int(s.n) + i, Msg: ErrTooDeep.Error(), err: ErrTooDeep}
			return
		}
		s.keepVal(p[i : i+1])
		s.valLong = true // never whole
		s.inVal = false
		s.stack = append(s.stack, c)
		s.st = sValueOrEnd
		if c == '{' {
			s.st = sKeyOrEnd
		}
		return
	case '"':
		s.st, s.key, s.esc = sString, false, 0
	case 't':
		s.st, s.lit = sLit, "rue"
	case 'f':
		s.st, s.lit = sLit, "alse"
	case 'n':
		s.st, s.lit = sLit, "ull"
	case '-':
		s.st = sNeg
	case '0':
		s.st = sZero
	default:
		if c < '1' || c > '9' {
			s.fail(p, i, "invalid character looking for beginning of value")
			return
		}
		s.st = sInt
	}
	s.keepVal(p[i : i+1])
}

// close closes the innermost container, a value that ends there.
func (s *Stream) close() {
	s.stack = s.stack[:len(s.stack)-1]
	s.st = sNext
}

// topMember reports that a member of a top-level object is being read.
func (s *Stream) topMember() bool { return len(s.stack) == 1 && s.stack[0] == '{' }

// memberEnd hands the member just read to Member.
func (s *Stream) memberEnd() {
	s.inVal = false
	if s.Member == nil {
		return
	}
	name := s.name
	if s.nameLong {
		name = nil
	}
	s.Member(name, s.val, !s.valLong)
}

func (s *Stream) keepVal(b []byte) {
	if !s.inVal || s.Member == nil {
		return
	}
	if len(s.val)+len(b) > maxVal {
		b = b[:maxVal-len(s.val)]
		s.valLong = true
	}
	s.val = append(s.val, b...)
}

func (s *Stream) keepName(b []byte) {
	if !s.inName || s.Member == nil {
		return
	}
	if len(s.name)+len(b) > maxName {
		s.nameLong = true
		return
	}
	s.name = append(s.name, b...)
}

// keep keeps string bytes of a top-level member's name or value.
func (s *Stream) keep(b []byte) {
	if s.key {
		s.keepName(b)
	} else {
		s.keepVal(b)
	}
}

// inString reads a string from p[i] and returns where to go on.
func (s *Stream) inString(p []byte, i int) int {
	for s.esc != 0 && i < len(p) { // complete an escape the last part cut
		c := p[i]
		switch {
		case s.esc == -1 && c == 'u':
			s.esc = 4
		case s.esc == -1 && (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't'):
			s.esc = 0
		case s.esc > 0 && isHex(c):
			s.esc--
		case s.esc == -1:
			s.fail(p, i, "invalid character in string escape code")
			return len(p)
		default:
			s.fail(p, i, "invalid character in \\u hexadecimal character escape")
			return len(p)
		}
		s.keep(p[i : i+1])
		i++
	}
	if i >= len(p) {
		return i
	}
	n, err := StringRest(p[i:])
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) {
			s.err = err
			return len(p)
		}
		if se.Offset == len(p)-i {
			s.keep(p[i:])
			s.esc = int8(CutEscape(p[i:]))
			return len(p)
		}
		se.Offset += int(s.n) + i
		s.err = se
		return len(p)
	}
	s.keep(p[i : i+n])
	if s.key {
		s.st, s.key, s.inName = sColon, false, false
	} else {
		s.st = sNext
	}
	return i + n
}

// inNumber reads a number from p[i] and returns where to go on: at the
// first byte that is not the number's, which is read as what follows a
// value.
func (s *Stream) inNumber(p []byte, i int) int {
	start := i
	for ; i < len(p); i++ {
		c := p[i]
		digit := c >= '0' && c <= '9'
		switch s.st {
		case sNeg:
			switch {
			case c == '0':
				s.st = sZero
			case digit:
				s.st = sInt
			default:
				s.fail(p, i, "invalid character in numeric literal")
				return len(p)
			}
		case sZero, sInt, sFrac:
			switch {
			case digit && s.st != sZero:
			case c == '.' && s.st != sFrac:
				s.st = sDot
			case c == 'e' || c == 'E':
				s.st = sE
			default:
				s.keepVal(p[start:i])
				s.st = sNext
				return i
			}
		case sDot:
			if !digit {
				s.fail(p, i, "invalid character after decimal point in numeric literal")
				return len(p)
			}
			s.st = sFrac
		case sE:
			switch {
			case c == '+' || c == '-':
				s.st = sESign
			case digit:
				s.st = sExp
			default:
				s.fail(p, i, "invalid character in exponent of numeric literal")
				return len(p)
			}
		case sESign:
			if !digit {
				s.fail(p, i, "invalid character in exponent of numeric literal")
				return len(p)
			}
			s.st = sExp
		case sExp:
			if !digit {
				s.keepVal(p[start:i])
				s.st = sNext
				return i
			}
		}
	}
	s.keepVal(p[start:i])
	return i
}
