import sys

n = int(sys.argv[1])
# TODO: print 1..n, with Fizz, Buzz and FizzBuzz
