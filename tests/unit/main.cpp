//===- main.cpp - doctest entry point for ireepkg's unit tests ------------===//
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
