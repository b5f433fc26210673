import { describe, expect, it } from 'vitest'
import { citationHTML } from './citation.js'

describe('citationHTML', () => {
  it.each([
    ['<div class="csl-entry">Smith, J. 2001. <i>Rome</i>.</div>', '<div>Smith, J. 2001. <i>Rome</i>.</div>'],
    ['<div>A <img src=x onerror="alert(1)"> B</div>', '<div>A  B</div>'],
    ['<a href="javascript:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="https://doi.org/10.1/x" onclick="x()">doi</a>', '<a href="https://doi.org/10.1/x">doi</a>'],
    ['<script>alert(1)</script>plain', 'plain'],
    ['<div class="csl-bib-body" style="line-height: 1.35;"><div style=\'margin:0\'>Coarelli 2014</div></div>', '<div><div>Coarelli 2014</div></div>'],
    [null, ''],
  ])('%j', (input, want) => { expect(citationHTML(input)).toBe(want) })
})
