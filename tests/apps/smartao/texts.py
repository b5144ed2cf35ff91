"""Crafted essays for the SmartAO tests (written for these tests; English and Japanese)."""

EN_REF = ("I have always been fascinated by the way cities grow. When I was twelve, my family moved to "
          "Osaka, and I spent weekends walking through neighbourhoods that had changed completely in a "
          "decade. This curiosity led me to volunteer with a local planning group, where I learned how "
          "residents negotiate with developers. At university I want to study urban planning so that I "
          "can help communities shape the places they live in.")
EN_OTHER = ("My interest in medicine began in my grandmother's kitchen. She managed her diabetes with a "
            "notebook full of careful records, and I helped her read the numbers every evening. In high "
            "school I joined the biology club and organised a health fair for elderly residents in our "
            "town. I hope to study public health at your university because I want to design programs "
            "that help people manage chronic illness at home.")
# two sentences of the reference followed by an essay of one's own: about a third copied
EN_PARTIAL = ". ".join(EN_REF.split(". ")[:2]) + ". " + EN_OTHER

JA_REF = ("私は幼い頃から都市の成り立ちに興味を持ってきました。十二歳のときに家族で大阪へ引っ越し、週末には十年で"
          "大きく変わった街を歩き回りました。この好奇心から地域のまちづくり団体でボランティアを始め、住民と開発業者"
          "がどのように話し合うのかを学びました。大学では都市計画を学び、人々が暮らす場所を自ら形作る手助けをしたい"
          "と考えています。")
JA_OTHER = ("私が医療に関心を持ったのは祖母の台所でした。祖母は糖尿病をノートに丁寧に記録して管理しており、私は毎晩"
            "その数値を一緒に読みました。高校では生物部に入り、町の高齢者のための健康フェアを企画しました。貴学で公衆"
            "衛生を学び、慢性疾患を自宅で管理できる仕組みを作りたいと考えています。")
JA_PARTIAL = JA_REF[:JA_REF.index("この好奇心")] + JA_OTHER  # two sentences copied, then one's own

ESSAY_EN = ("# Motivation\n\nI want to study public health. My grandmother taught me to keep records.\n\n"
            "# Experience\n\nI organised a health fair. i learned alot from it.\n")
ESSAY_JA = ("【志望動機】\n私は公衆衛生を学びたいです。。祖母から記録の大切さを学びました。\n\n"
            "【活動】\n高校で健康フェアを企画しました。朝早く起きれるようになりました。\n")

# one distinct judgement per criterion of the bundled rubric (scripted EvalAgent answers)
REASONS = {"motivation": "a personal reason is named", "evidence": "one episode is told with what was done",
           "reflection": "what was learnt is said", "fit": "the programme is named only",
           "expression": "clear with few errors"}
