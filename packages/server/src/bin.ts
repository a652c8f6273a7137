#!/usr/bin/env node
console.log('svc-graphql: the reference server arrives with the next issue');
