#include <cstdio>

int main() {
  std::puts("kforge " KFORGE_VERSION);
  return 0;
}
